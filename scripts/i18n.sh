#!/usr/bin/env bash
# The cockpit's message catalogues, with Babel (pip install -e '.[test]' brings it):
#   scripts/i18n.sh          extract the marked strings, merge them into the .po, compile the .mo
#   scripts/i18n.sh compile  only compile cockpit/locale/*/LC_MESSAGES/cockpit.po into cockpit.mo
# Translators edit cockpit/locale/zh_CN/LC_MESSAGES/cockpit.po (terms: docs/glossary-zh.md);
# both the .po and the .mo are committed, and tests/test_i18n.py fails when they disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
pot=$(mktemp --suffix=.pot)
trap 'rm -f "$pot"' EXIT
if [[ "${1:-}" != compile ]]; then
  python3 -m babel.messages.frontend extract -F babel.cfg --no-location --sort-output \
    --project=cockpit --msgid-bugs-address= -o "$pot" .
  python3 -m babel.messages.frontend update -i "$pot" -d cockpit/locale -D cockpit -l zh_CN \
    --no-fuzzy-matching --ignore-obsolete
fi
python3 -m babel.messages.frontend compile -d cockpit/locale -D cockpit --statistics
