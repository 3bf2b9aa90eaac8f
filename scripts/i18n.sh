#!/usr/bin/env bash
# The cockpit's message catalogues, with Babel (pip install -e '.[test]' brings it):
#   scripts/i18n.sh [AREA...]   extract the marked strings of each area (all three by default),
#                               merge them into its .po, then compile every .po into its .mo
#   scripts/i18n.sh compile     only compile cockpit/locale/*/LC_MESSAGES/*.po into .mo
# One catalogue per area of the sources, so the engine's texts, the TUI's and the rest can be
# translated side by side without touching one file (cockpit/i18n.py loads all three):
#   engine   cockpit/diagnosis (rules, code tables): every finding's title, explanation, remedy,
#            and the failure catalogue's remedies (cockpit/diagnosis/catalogue/*.json)
#   tui      cockpit/screens, widgets, cockpit/app.py, cockpit/views.py, incident_views.py,
#            status_views.py
#   cockpit  everything else: the CLI, alerts and chat templates, exports, the web page
# Translators edit cockpit/locale/zh_CN/LC_MESSAGES/AREA.po (terms: docs/glossary-zh.md); the
# .po and .mo are committed, and tests/test_i18n.py fails when they disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
msgs=cockpit/locale/zh_CN/LC_MESSAGES

area_files() {
  case "$1" in
    engine) find cockpit/diagnosis -name '*.py'
            find cockpit/diagnosis/catalogue -name '*.json' ;;
    tui) find cockpit/screens widgets -name '*.py'
         printf '%s\n' cockpit/app.py cockpit/views.py cockpit/incident_views.py \
           cockpit/status_views.py ;;
    cockpit) find cockpit -name '*.py' -not -path 'cockpit/diagnosis/*' \
               -not -path 'cockpit/screens/*' -not -name app.py -not -name views.py \
               -not -name incident_views.py \
               -not -name status_views.py ;;
    *) echo "unknown area: $1 (engine, tui, cockpit)" >&2; exit 2 ;;
  esac
}

if [[ "${1:-}" != compile ]]; then
  areas=("$@")
  [[ ${#areas[@]} -gt 0 ]] || areas=(engine tui cockpit)
  for area in "${areas[@]}"; do
    pot=$(mktemp --suffix=.pot)
    mapfile -t files < <(area_files "$area" | sort)
    # babel.cfg maps the sources to their extractor (Python; the catalogue's JSON for engine)
    python3 -m babel.messages.frontend extract -F babel.cfg --no-location --sort-output \
      --project=cockpit --msgid-bugs-address= -o "$pot" "${files[@]}" >/dev/null
    if [[ -f "$msgs/$area.po" ]]; then
      python3 -m babel.messages.frontend update -i "$pot" -o "$msgs/$area.po" -l zh_CN \
        --no-fuzzy-matching --ignore-obsolete
    else
      python3 -m babel.messages.frontend init -i "$pot" -o "$msgs/$area.po" -l zh_CN
    fi
    rm -f "$pot"
  done
fi
for po in cockpit/locale/*/LC_MESSAGES/*.po; do
  python3 -m babel.messages.frontend compile -i "$po" -o "${po%.po}.mo" --statistics
done
