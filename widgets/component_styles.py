"""Textual's component-class styles without a new node at every restyle (issue #32, the week).

``Stylesheet._process_component_classes`` gives every widget with ``COMPONENT_CLASSES`` (tables,
the key bar, option lists, scroll bars...) one virtual ``DOMNode`` per component class, made
anew each time the stylesheet is applied to the widget: at every screen change, focus change
and hover, for every such widget of the screen. The old node and its styles are a cycle
(styles -> node -> styles, with signals, weak sets and caches: ~25 objects). The cockpit
freezes what is alive at each poll (:mod:`cockpit.gcpolicy`), so the old nodes, alive when a
poll landed, died frozen: the soak's leak hunt found ~6 of them per view change, with their
objects most of the frozen garbage a view change leaves, kept until a hand-back (a full
collection: 0.3-1.5 s at 10k jobs).

Here each widget keeps its virtual node per component class and the stylesheet is applied to
it again (what Textual does for every real widget): the same rules, no new cycle. The widget is
refreshed when a component's rules changed, as before.
"""

from __future__ import annotations

from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode

_KEPT = "_cockpit_component_nodes"  # on the widget: {component class: its virtual node}
_original = Stylesheet._process_component_classes


def _rules(node: DOMNode) -> tuple[dict, dict]:
    styles = node.styles
    return dict(styles.base._rules), dict(styles.inline._rules)


def _process_component_classes_kept(self: Stylesheet, node: DOMNode) -> None:
    component_classes = node._get_component_classes()
    if not component_classes:
        return
    kept: dict[str, DOMNode] | None = node.__dict__.get(_KEPT)
    if kept is None:
        kept = node.__dict__[_KEPT] = {}
    old_component_styles = node._component_styles.copy()
    node._component_styles.clear()
    refresh_node = False
    for component in sorted(component_classes):
        virtual_node = kept.get(component)
        if virtual_node is None:
            virtual_node = kept[component] = DOMNode(classes=component)
            virtual_node._attach(node)  # a weak reference to the widget: no cycle through it
            before = None
        else:
            before = _rules(virtual_node)
        self.apply(virtual_node, animate=False)
        if not refresh_node:
            old = old_component_styles.get(component)
            if before is None or old is not virtual_node.styles:
                refresh_node = old != virtual_node.styles
            else:
                refresh_node = before != _rules(virtual_node)
        node._component_styles[component] = virtual_node.styles
    if refresh_node:
        node.refresh()


def install() -> None:
    """Patch ``Stylesheet`` (idempotent). Called as the app module is imported."""
    Stylesheet._process_component_classes = _process_component_classes_kept  # type: ignore[method-assign]


def uninstall() -> None:
    """Textual's own behaviour again (the tests compare the two)."""
    Stylesheet._process_component_classes = _original  # type: ignore[method-assign]
