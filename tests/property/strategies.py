"""Hypothesis strategies for pipeline graphs and DOT text (shared by the property tests)."""

from __future__ import annotations

import operator
import string

from hypothesis import strategies as st

from orchestra_core.graph import Edge, Graph, Node

DOT_KEYWORDS = ["node", "Node", "EDGE", "graph", "Graph", "digraph", "subgraph", "Strict"]
_FIRST = string.ascii_letters + "_"
_REST = _FIRST + string.digits


def _identifiers(max_size: int) -> st.SearchStrategy[str]:
    # Built from alphabets rather than st.from_regex, which is several times slower to draw.
    return st.builds(operator.add, st.sampled_from(_FIRST), st.text(_REST, max_size=max_size))


IDENTIFIER = st.one_of(_identifiers(10), st.sampled_from([*DOT_KEYWORDS, "start", "_"]))
# Graphviz gives some attribute names a meaning of its own; they must still be plain attributes here.
GRAPHVIZ_KEYS = [
    "label",
    "charset",
    "key",
    "tailport",
    "headport",
    "layout",
    "class",
    "id",
    "comment",
    "URL",
    "root",
]
KEY = st.one_of(
    st.lists(_identifiers(6), min_size=1, max_size=3).map(".".join),
    st.sampled_from(GRAPHVIZ_KEYS + DOT_KEYWORDS),
)
# Any text a user might put in an attribute: quotes, backslashes, newlines, tabs, unicode. Empty means
# "unset" in the model, NUL is refused as binary, lone surrogates cannot be UTF-8, and the loader keeps
# four Unicode noncharacters (U+FDD0-U+FDD3) for its own use and refuses them with a line number.
REFUSED = "\x00\ufdd0\ufdd1\ufdd2\ufdd3"
VALUE = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters=REFUSED), min_size=1, max_size=30
)
SPECIAL_VALUE = st.sampled_from(
    [
        'say "hi"',
        "back\\slash",
        "line\nbreak",
        "tab\there",
        "\\n literal",
        "é ✓ 模型",
        "a->b",
        "x;y",
        "[z]",
        "{w}",
        "// not a comment",
        "/* nor this */",
        "\r\n",
    ]
)
ATTRS = st.dictionaries(KEY, st.one_of(VALUE, SPECIAL_VALUE), max_size=3)


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    """A valid Graph (every edge between declared nodes) with arbitrary attribute text."""
    node_ids = draw(st.lists(IDENTIFIER, min_size=1, max_size=6, unique_by=str.lower))
    nodes = {node_id: Node(node_id, draw(ATTRS)) for node_id in node_ids}
    pairs = st.tuples(st.sampled_from(node_ids), st.sampled_from(node_ids))
    edges = [Edge(a, b, draw(ATTRS)) for a, b in draw(st.lists(pairs, max_size=8))]
    # Graphviz keeps names starting with "%" for anonymous graphs, so such a name reads back as "".
    name = draw(st.one_of(st.just(""), IDENTIFIER, VALUE.filter(lambda text: not text.startswith("%"))))
    return Graph(name=name, attrs=draw(ATTRS), nodes=nodes, edges=edges)


# Text shaped like each language, for the fuzz tests: mostly its own tokens, in any order.
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
DOT_ALPHABET = st.sampled_from(
    [
        *'digraphnodeedgesubgraphstrict{}[]=;,->"\\/*#\n\t <>:.%$+',
        *["->", "--", "/*", "*/", "//", '\\"', "\\n", '" + "', "\ufeff"],
    ]
)
DOT_LIKE = st.lists(DOT_ALPHABET, max_size=80).map("".join)
CONDITION_LIKE = st.lists(
    st.sampled_from(
        ["outcome", "context.", "x", "=", "!=", "==", "&&", "&", '"', "\\", " ", "a-b", "1", "\n", "é"]
    ),
    max_size=20,
).map("".join)
STYLESHEET_LIKE = st.lists(
    st.sampled_from(
        [
            "*",
            "box",
            ".c",
            "#n",
            "{",
            "}",
            ";",
            ":",
            "llm_model",
            "reasoning_effort",
            "x",
            '"',
            "'",
            "/*",
            "*/",
            " ",
            "\n",
            ",",
        ]
    ),
    max_size=30,
).map("".join)
