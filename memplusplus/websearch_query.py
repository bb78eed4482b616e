"""Postgres' ``websearch_to_tsquery('english', question)`` in Python: the authors' conjunctive
lexical leg sends the whole question through it (AIDAChip-Inc/mem-plus-plus memory/store.py:379).
Restated from Postgres 18's ``gettoken_query_websearch``, ``makepol``, ``pushval_morph`` and
``clean_stopword_intree``; checked against a live Postgres in tests/test_websearch_query.py.

- Unquoted text splits at blanks, at ``! & | ( ) <`` (skipped), at ``"`` and after ``:``; operands
  side by side are ANDed; ``"..."`` is one operand; a ``-`` where an operand is expected is NOT;
  after an operand, "or" followed by a non-word character and later a non-blank is OR.
- Precedence NOT > phrase > AND > OR, equal operators grouped from the left.
- An operand's words (``memplusplus.english_tsearch``) form a phrase; a stop word inside leaves a
  gap (``'cat' <3> 'hat'``); an operand of stop words only is dropped with its operator.
"""

from __future__ import annotations

from dataclasses import dataclass

from memplusplus.english_tsearch import quote, tsvector_positions

NOT, AND, OR, PHRASE = "!", "&", "|", "<->"
# Postgres' operator priorities (tsquery.c, tsearch_op_priority).
PRIORITY = {NOT: 4, PHRASE: 3, AND: 2, OR: 1}
_SKIPPED = frozenset("!&|()<")  # ISOPERATOR: skipped by the websearch parser
_BLANK = frozenset(" \t\n\r\v\f")


@dataclass(frozen=True)
class Lexeme:
    text: str


@dataclass(frozen=True)
class Not:
    child: "Node"


@dataclass(frozen=True)
class Binary:
    op: str  # AND, OR or PHRASE
    left: "Node"
    right: "Node"
    distance: int = 0  # PHRASE only: the right operand sits exactly this many positions after the left


@dataclass(frozen=True)
class _Stop:
    """A stop-word placeholder, removed before the query is used."""


Node = Lexeme | Not | Binary
_STOP = _Stop()


@dataclass(frozen=True)
class WebsearchQuery:
    """A parsed question: its tree (None when only stop words are left) and Postgres' text form."""

    root: Node | None

    @property
    def text(self) -> str:
        return "" if self.root is None else _infix(self.root, -1, False)

    def lexemes(self) -> list[str]:
        """Every lexeme the query names (under NOT too), distinct, left to right."""
        found: list[str] = []

        def walk(node: Node) -> None:
            if isinstance(node, Lexeme):
                found.append(node.text)
            elif isinstance(node, Not):
                walk(node.child)
            else:
                walk(node.left)
                walk(node.right)

        if self.root is not None:
            walk(self.root)
        return list(dict.fromkeys(found))


def _operand_end(text: str, at: int) -> int:
    """Where an unquoted operand starting at ``at`` ends (the tsvector parser in websearch mode)."""
    end = at + 1
    while end < len(text):
        ch = text[end]
        if ch in _BLANK or ch in _SKIPPED or ch == '"' or ch == ":":
            break
        end += 1
    return end


def _is_or_operator(text: str, at: int) -> bool:
    """'or' at ``at`` is the OR operator: not part of a word, and some non-blank follows."""
    if text[at : at + 2].lower() != "or":
        return False
    nxt = at + 2
    if nxt >= len(text) or text[nxt] in "-_" or text[nxt].isalnum():
        return False
    nxt += 1
    while nxt < len(text):
        if text[nxt] not in _BLANK:
            return True
        nxt += 1
    return False


def _tokens(question: str):
    """Yield ("val", text) | ("op", operator) | ("stop", None) as Postgres' tokenizer does."""
    at, waiting_first, waiting_operand = 0, True, True
    n = len(question)
    while True:
        if waiting_operand:
            if at < n and question[at] == "-":
                at += 1
                waiting_first = False
                yield "op", NOT
            elif at < n and question[at] == '"':
                end = question.find('"', at + 1)
                end = n if end < 0 else end
                yield "val", question[at + 1 : end]
                at = min(end + 1, n)
                waiting_operand = waiting_first = False
            elif at < n and question[at] in _SKIPPED:
                at += 1
                waiting_first = False
            elif at < n and question[at] in _BLANK:
                at += 1
            else:
                if at >= n:  # no operand left
                    if not waiting_first:
                        yield "stop", None
                    return
                end = _operand_end(question, at)
                yield "val", question[at:end]
                at = end
                waiting_operand = waiting_first = False
        else:
            if at >= n:
                return
            if _is_or_operator(question, at):
                at += 2
                waiting_operand = True
                yield "op", OR
            elif question[at] in _SKIPPED:
                at += 1
            elif question[at] not in _BLANK:
                waiting_operand = True  # an implicit AND; the operand starts here
                yield "op", AND
            else:
                at += 1


def _operand_items(text: str) -> list:
    """One operand's postfix items (``pushval_morph``): words joined by distance-1 phrase operators,
    a placeholder for each stop word between two words."""
    words = sorted((position, lexeme) for lexeme, positions in tsvector_positions(text).items() for position in positions)
    if not words:
        return [_STOP]
    items: list = []
    last, count = 0, 0
    for position, lexeme in words:
        while last > 0 and last + 1 < position:  # a stop word between two words
            items.append(_STOP)
            if count:
                items.append((PHRASE, 1))
            count += 1
            last += 1
        last = position
        items.append(Lexeme(lexeme))
        if count:
            items.append((PHRASE, 1))
        count += 1
    return items


def _postfix(question: str) -> list:
    """The query in postfix order (shunting-yard with Postgres' priorities; NOT is right-associative)."""
    out: list = []
    stack: list[str] = []
    for kind, value in _tokens(question):
        if kind == "val":
            out.extend(_operand_items(value))
        elif kind == "stop":
            out.append(_STOP)
        else:
            while stack:
                top = stack[-1]
                if (value != NOT and PRIORITY[value] > PRIORITY[top]) or (value == NOT and PRIORITY[value] >= PRIORITY[top]):
                    break
                out.append((stack.pop(), 0))
            stack.append(value)
    while stack:
        out.append((stack.pop(), 0))
    return out


def _tree(items: list):
    stack: list = []
    for item in items:
        if isinstance(item, tuple):
            op, distance = item
            if op == NOT:
                stack.append(Not(stack.pop()))
            else:
                right, left = stack.pop(), stack.pop()
                stack.append(Binary(op, left, right, distance if op == PHRASE else 0))
        else:
            stack.append(item)
    if len(stack) != 1:
        raise ValueError("malformed query")
    return stack[0]


def _without_stops(node) -> tuple[Node | None, int, int]:
    """Drop stop placeholders, a phrase losing an operand passing its distance on to the nearest
    phrase operator on that side (``clean_stopword_intree``); (node, ladd, radd)."""
    if isinstance(node, _Stop):
        return None, 0, 0
    if isinstance(node, Lexeme):
        return node, 0, 0
    if isinstance(node, Not):
        child, ladd, radd = _without_stops(node.child)
        return (None, ladd, radd) if child is None else (Not(child), ladd, radd)
    left, lladd, lradd = _without_stops(node.left)
    right, rladd, rradd = _without_stops(node.right)
    phrase = node.op == PHRASE
    distance = node.distance if phrase else 0
    if left is None and right is None:
        add = lladd + distance + rladd if phrase else max(lladd, rladd)
        return None, add, add
    if left is None:
        return right, (lladd + distance + rladd if phrase else rladd), rradd
    if right is None:
        return left, lladd, (lradd + distance + rradd if phrase else lradd)
    if phrase:
        return Binary(PHRASE, left, right, distance + lradd + rladd), lladd, rradd
    return Binary(node.op, left, right), 0, 0


def websearch_query(question: str) -> WebsearchQuery:
    """``websearch_to_tsquery('english', question)``."""
    items = _postfix(question)
    if not items:
        return WebsearchQuery(None)
    root = _tree(items)
    if any(item is _STOP for item in items):
        root, _, _ = _without_stops(root)
    return WebsearchQuery(root)


def _infix(node: Node, parent: int, right_of_phrase: bool) -> str:
    if isinstance(node, Lexeme):
        return quote(node.text)
    if isinstance(node, Not):
        inner = "!" + _infix(node.child, PRIORITY[NOT], False)
        return f"( {inner} )" if PRIORITY[NOT] < parent else inner
    priority = PRIORITY[node.op]
    right = _infix(node.right, priority, node.op == PHRASE)
    left = _infix(node.left, priority, False)
    if node.op == PHRASE:
        operator = "<->" if node.distance == 1 else f"<{node.distance}>"
    else:
        operator = node.op
    text = f"{left} {operator} {right}"
    if priority < parent or (node.op == PHRASE and right_of_phrase):
        return f"( {text} )"
    return text
