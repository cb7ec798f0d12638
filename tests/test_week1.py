"""Week 1 ("A graph is a plan"): the notebooks, their nbgrader grading and ``make check``.

One nbgrader run (module-scoped) grades the solution and the first known-wrong answer
of each exercise (in one bundle, one wrong answer per exercise, see ``tests/weeks.py``); one
run of the solution forks to check every wrong answer (``tests/forked_answers.py``), and
``make check WEEK=1`` runs on the untouched release meanwhile. Each wrong answer is what a
student would plausibly write, and must lose points on its own exercise only.
"""

from __future__ import annotations

from weeks import NBGRADER_WARNINGS, Wrong, cells, release_of, source_of, week_suite

SOURCE, RELEASE = source_of(1), release_of(1)
pytestmark = NBGRADER_WARNINGS

WIRE_TESTS = frozenset({"ex2_wire_visible", "ex2_wire_hidden"})
REDUCER_TESTS = frozenset({"ex4_reducer_visible", "ex4_reducer_hidden"})

_PARSE_HEAD = "import re\n\n\ndef parse(state, world):\n    text = state['message']\n"
_RULES = ("    rules = (('refund', 'refund'), ('pause', 'pause'), ('cancel', 'cancel'),"
          " ('pay', 'charge'), ('charge', 'charge'))\n")
_CORRECT_PREDICTION = ('PREDICTION = {"intent": "refund", "invoice_id": "inv_11", '
                       '"customer_id": "cus_marta", "cents": 12900, "currency": "eur", '
                       '"log": ["parse", "retrieve", "refund", "email"]}')
_CHAIN = ['builder.add_edge(START, "parse")', 'builder.add_edge("parse", "retrieve")']

WRONG = {
    # Exercise 1: parse
    "ex1_intent_is_case_sensitive": Wrong(1, {"ex1_parse": _PARSE_HEAD + _RULES + (
        "    intent = next((name for w, name in rules if w in text), 'unknown')\n"
        "    found = re.search(r'inv_\\d+', text)\n"
        "    return {'intent': intent, 'invoice_id': found.group(0) if found else '',"
        " 'log': ['parse']}\n")}, frozenset({"ex1_parse_hidden"})),
    "ex1_invoice_by_split_crashes_without_one": Wrong(1, {"ex1_parse": _PARSE_HEAD + _RULES + (
        "    lowered = text.lower()\n"
        "    intent = next((name for w, name in rules if w in lowered), 'unknown')\n"
        "    invoice = 'inv_' + text.split('inv_')[1].split()[0].strip('.,!?')\n"
        "    return {'intent': intent, 'invoice_id': invoice, 'log': ['parse']}\n")},
        frozenset({"ex1_parse_hidden"})),
    "ex1_wraps_the_courses_parse": Wrong(1, {"ex1_parse": (
        "from course.cloudwave import parse as course_parse\n\n\n"
        "def parse(state, world):\n    return course_parse(state, world)\n")},
        frozenset({"ex1_parse_visible", "ex1_parse_hidden"})),
    # the spec names pay/charge: a parse that knows only the three actions loses points
    "ex1_no_charge_intent": Wrong(1, {"ex1_parse": _PARSE_HEAD + (
        "    lowered = text.lower()\n"
        "    intent = next((w for w in ('refund', 'pause', 'cancel') if w in lowered),"
        " 'unknown')\n"
        "    found = re.search(r'inv_\\d+', text)\n"
        "    return {'intent': intent, 'invoice_id': found.group(0) if found else '',"
        " 'log': ['parse']}\n")}, frozenset({"ex1_parse_visible", "ex1_parse_hidden"})),
    # the spec says substring: whole words miss "refunded" and "payment"
    "ex1_whole_words_only": Wrong(1, {"ex1_parse": _PARSE_HEAD + _RULES + (
        "    words = set(re.findall(r'[a-z]+', text.lower()))\n"
        "    intent = next((name for w, name in rules if w in words), 'unknown')\n"
        "    found = re.search(r'inv_\\d+', text)\n"
        "    return {'intent': intent, 'invoice_id': found.group(0) if found else '',"
        " 'log': ['parse']}\n")}, frozenset({"ex1_parse_hidden"})),
    # Exercise 2: wiring
    "ex2_email_beside_refund": Wrong(2, {"ex2_wire": "def wire(builder):\n    " + "\n    ".join([
        *_CHAIN, 'builder.add_edge("retrieve", "refund")', 'builder.add_edge("retrieve", "email")',
        'builder.add_edge("refund", END)', 'builder.add_edge("email", END)',
        "return builder.compile()"])}, WIRE_TESTS),  # the visible test checks refund → email
    "ex2_email_before_refund": Wrong(2, {"ex2_wire": "def wire(builder):\n    " + "\n    ".join([
        *_CHAIN, 'builder.add_edge("retrieve", "email")', 'builder.add_edge("email", "refund")',
        'builder.add_edge("refund", END)', "return builder.compile()"])}, WIRE_TESTS),
    "ex2_retrieve_left_out": Wrong(2, {"ex2_wire": "def wire(builder):\n    " + "\n    ".join([
        'builder.add_edge(START, "parse")', 'builder.add_edge("parse", "refund")',
        'builder.add_edge("refund", "email")', 'builder.add_edge("email", END)',
        "return builder.compile()"])}, WIRE_TESTS),
    "ex2_not_compiled": Wrong(2, {"ex2_wire": "def wire(builder):\n    " + "\n    ".join([
        *_CHAIN, 'builder.add_edge("retrieve", "refund")', 'builder.add_edge("refund", "email")',
        'builder.add_edge("email", END)', "return builder"])}, WIRE_TESTS),
    # Exercise 3: the prediction
    "ex3_amount_in_euros": Wrong(3, {"ex3_prediction": _CORRECT_PREDICTION.replace(
        '"cents": 12900', '"cents": 129.0')}, frozenset({"ex3_prediction_hidden"})),
    "ex3_log_keeps_the_last_node": Wrong(3, {"ex3_prediction": _CORRECT_PREDICTION.replace(
        '["parse", "retrieve", "refund", "email"]', '["email"]')},
        frozenset({"ex3_prediction_hidden"})),
    "ex3_intent_cancel": Wrong(3, {"ex3_prediction": _CORRECT_PREDICTION.replace(
        '"intent": "refund"', '"intent": "cancel"')}, frozenset({"ex3_prediction_hidden"})),
    # Exercise 4: the reducer
    "ex4_no_reducer": Wrong(4, {"ex4_reducer": (
        "class AuditState(TypedDict, total=False):\n    message: str\n    log: list[str]\n")},
        REDUCER_TESTS),
    "ex4_reducer_nests_lists": Wrong(4, {"ex4_reducer": (
        "class AuditState(TypedDict, total=False):\n    message: str\n"
        "    log: Annotated[list[str], lambda old, new: old + [new]]\n")}, REDUCER_TESTS),
    "ex4_reducer_sorts_a_set": Wrong(4, {"ex4_reducer": (
        "class AuditState(TypedDict, total=False):\n    message: str\n"
        "    log: Annotated[list[str], lambda old, new: sorted(set(old) | set(new))]\n")},
        frozenset({"ex4_reducer_hidden"})),
}


globals().update(week_suite(
    week=1, exercises=4, total=19, written=[2, 2], wrongs=WRONG, at_least=3, bundled=1,
    demos=["no reducer:   ['second']", "operator.add: ['first', 'second']",
           "InvalidUpdateError - At key 'log'", "{**state} update: ['first', 'first', 'second']",
           "unreachable node: ['first']", "retrieve ---> refund"],
    said={},
    secrets=["re.search", "builder.add_edge(START, \"parse\")", "cus_marta",
             "The receipt (\"We refunded you\")"],
))


# ------------------------------------------------------------ week 1's own checks
def _cell(cell_id: str) -> str:
    return next(c.source for c in cells(SOURCE) if c.get("id") == cell_id)


def test_the_reference_parse_is_exercise_1s_spec_and_adds_what_the_picture_says():
    """Exercise 3 runs the course's parse as "your exercise 1": the hidden cases hold for it,
    and its update has exactly the fields the picture (cell 3) gives parse."""
    import ast

    from course.cloudwave import parse as reference

    hidden = ast.parse(_cell("ex1-parse-hidden"))
    cases = next(ast.literal_eval(node.value) for node in ast.walk(hidden)
                 if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_cases")
    assert {intent for _, intent, _ in cases} == {"refund", "pause", "cancel", "charge", "unknown"}
    for message, intent, invoice in cases:
        assert reference({"message": message}, None) == {
            "intent": intent, "invoice_id": invoice, "log": ["parse"]}, message
    picture = _cell("cell-03")
    assert "intent" in picture and "invoice_id" in picture and 'log+["parse"]' in picture


def test_the_text_sends_no_one_to_the_reference_source():
    """Exercise 1's answer is in nodes.py and exercise 2's in graph.py: the notebook shows what
    a student needs (docstrings, the catalogue) instead, and says why not to read the package."""
    text = "\n".join(c.source for c in cells(RELEASE))
    for path in ("cloudwave/nodes.py", "cloudwave/graph.py", "cloudwave/plan.py",
                 "world/catalogue.py"):
        assert path not in text, path
    assert "reference\nimplementation" in text and "spoils the exercise" in text
