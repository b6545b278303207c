"""The line a hit shows for a query that quotes text (esqlog.agent.matching.quoted_lines): the
line that holds the quotation, as rg prints it, whatever line holds more of its words."""

from __future__ import annotations

import pytest

from esqlog.agent.chunks import Chunk
from esqlog.agent.matching import MAX_QUOTED_LINES, matching_lines, words_of
from esqlog.agent.outline import MAX_LINE_CHARS
from esqlog.agent.queries import agent_query, as_written
from esqlog.agent.quoted import line_starts, occurrences, quotation, quotations

#: gin's tree.go, lines 209-234: the comment holds the words, the panic the message
TREE = """\t\t\tif n.wildChild {
\t\t\t\tn = n.children[len(n.children)-1]
\t\t\t\t// inserting a wildcard node, need to check if it conflicts with the existing wildcard
\t\t\t\tn.priority++
\t\t\t\t// Check if the wildcard matches
\t\t\t\tif len(path) >= len(n.path) && n.path == path[:len(n.path)] {
\t\t\t\t\tcontinue walk
\t\t\t\t}
\t\t\t\tpanic("'" + pathSeg +
\t\t\t\t\t"' in new path '" + fullPath +
\t\t\t\t\t"' conflicts with existing wildcard '" + n.path +
\t\t\t\t\t"' in existing prefix '" + prefix +
\t\t\t\t\t"'")
\t\t\t}
"""


def _chunk(text: str = TREE, start: int = 209) -> Chunk:
    return Chunk("1", text, "tree.go", "node.addRoute", start, True)


def _numbers(query: str, chunk: Chunk | None = None) -> list[int]:
    return [n for n, _ in matching_lines(chunk or _chunk(), words_of(query))]


def test_the_quoted_message_is_shown_not_the_line_with_most_words() -> None:
    assert _numbers("conflicts with existing wildcard") == [219]
    # without the quotation (its words out of order) the rule of most words holds
    assert _numbers("wildcard existing conflicts") == [211]


def test_case_and_spacing_as_the_quoted_search_takes_them() -> None:
    assert _numbers("Conflicts   WITH existing\twildcard") == [219]
    assert _numbers("conflicts-with-existing-wildcard") == [219]


def test_a_quotation_over_a_line_break_shows_the_lines_it_spans() -> None:
    joined = _chunk('x := 1\nerr := errors.New("cannot read " +\n\t"nil body")\n', 4)
    assert _numbers("cannot read nil body", joined) == [5, 6]
    lines = "\n".join(f'    "word{k} and" +' for k in range(8))
    long = " ".join(f"word{k} and" for k in range(8))
    assert _numbers(long, _chunk(lines, 1)) == list(range(1, MAX_QUOTED_LINES + 1))


def test_each_quotation_set_off_in_a_query_shows_its_line() -> None:
    query = 'panic "conflicts with existing wildcard" and "in existing prefix" at start'
    assert _numbers(query) == [219, 220]
    # a quotation the chunk does not hold is passed over, the others still shown
    assert _numbers('"conflicts with existing wildcard" "no such words here"') == [219]


def test_a_chunk_without_the_quotation_falls_back_to_most_words() -> None:
    assert _numbers('"conflicts with the new wildcard" need check') == [211]


def test_a_backticked_name_shows_the_line_that_writes_it() -> None:
    chunk = _chunk("client = Client()\n# the httpx client\nwith httpx.Client() as c:\n", 10)
    assert _numbers("close `httpx.Client` client", chunk) == [12]
    # prepared as search_code prepares it: the name's parts added after the text
    assert [n for n, _ in matching_lines(chunk, words_of(agent_query("`httpx.Client`")))] == [12]


def test_a_quoted_identifier_prefers_the_line_that_names_it_whole() -> None:
    chunk = _chunk("// clientIP is what ClientIP returns\nip := c.ClientIP()\nx := clientIPs\n", 1)
    assert _numbers('"ClientIP"', chunk) == [1]  # both say it whole: the earlier
    chunk = _chunk("// the client ip\nip := client_ip(r)\nreturn c.ClientIP()\n", 1)
    assert _numbers('"ClientIP"', chunk) == [3]  # the others spell other words


def test_of_several_occurrences_the_one_with_most_query_words() -> None:
    chunk = _chunk('log("nil body")\nerrors.New("cannot read nil body")\nread("nil body")\n', 5)
    assert _numbers('cannot read "nil body"', chunk) == [6]


def test_a_long_line_is_cut_around_the_quotation() -> None:
    line = (
        "x = f(" + ", ".join(f"arg{k}" for k in range(40)) + ', "conflicts with existing wildcard")'
    )
    ((number, shown),) = matching_lines(
        _chunk(line, 3), words_of("conflicts with existing wildcard")
    )
    assert number == 3 and len(shown) <= MAX_LINE_CHARS
    assert shown.startswith("…") and "conflicts with existing wildcard" in shown
    # a quotation inside the first MAX_LINE_CHARS keeps the line's start
    early = 'panic("conflicts with existing wildcard" + ' + "x + " * 60 + "y)"
    ((_, kept),) = matching_lines(_chunk(early, 1), words_of("conflicts with existing wildcard"))
    assert kept.startswith('panic("conflicts') and kept.endswith("…")


def test_a_long_line_is_cut_so_the_quotation_ends_the_window() -> None:
    quote = "conflicts with existing wildcard"
    line = "    x = f(" + ", ".join(f"a{k}" for k in range(30)) + f', "{quote}")'
    assert MAX_LINE_CHARS < line.strip().index(quote) + len(quote) < 2 * MAX_LINE_CHARS
    chunk = _chunk("first line\nsecond\n" + line + "\n", 1)  # columns of a later line
    ((number, shown),) = matching_lines(chunk, words_of(quote))
    # as much of the line before it as fits, the quotation last, a mark at each cut
    end = line.strip().index(quote) + len(quote)
    assert number == 3 and shown == "…" + line.strip()[end - MAX_LINE_CHARS + 2 : end] + "…"
    # the same quotation twice on the line: the first place, the line's start kept
    twice = f'f("{quote}", ' + "x, " * 50 + f'"{quote}")'
    ((_, first),) = matching_lines(_chunk(twice, 1), words_of(quote))
    assert first.startswith(f'f("{quote}"')


def test_a_quotation_with_a_dotted_name_is_found_in_the_prepared_query() -> None:
    chunk = _chunk(
        "# httpx Timeout: the Timeout must be positive\n"
        'raise ValueError("httpx.Timeout must be positive")\n',
        1,
    )
    query = words_of(agent_query("httpx.Timeout must be positive"))
    assert [n for n, _ in matching_lines(chunk, query)] == [2]


def test_quotations_are_the_whole_query_and_the_parts_set_off() -> None:
    ((whole,),) = [quotations('"conflicts with existing wildcard".')]
    assert whole.pattern == quotation("conflicts with existing wildcard")
    assert whole.text == "conflicts with existing wildcard"
    assert len(quotations('x "a b" `c.d` “e f”')) == 4  # whole, then three marks
    assert len(quotations("it's the user's 'name' here")) == 1  # single quotes mark nothing
    assert quotations('"nil body"') != ()  # a mark quotes fewer words than a whole query needs
    assert quotations("nil body") == ()


def test_occurrences_number_the_lines_as_the_index_does() -> None:
    text = "a\r\nb conflicts with\n  // existing wildcard\nconflicts with existing wildcard"
    ((quoted,),) = [quotations("conflicts with existing wildcard")]
    found = occurrences(text, quoted.pattern)
    assert [(o.first, o.last) for o in found] == [(1, 2), (3, 3)]
    assert line_starts(text) == [0, 3, 20, 43]  # after "\r\n" too: a line starts past it
    assert occurrences(text, quoted.pattern, line_starts(text)) == found
    assert line_starts("") == [0] and line_starts("a\n") == [0, 2]


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("httpx.Timeout must be  positive, see #12", "httpx.Timeout must be positive, see"),
        ("open pkg/auth/token.go now", "open pkg/auth/token.go now"),
        ("conflicts with existing wildcard", "conflicts with existing wildcard"),
    ],
)
def test_as_written_takes_off_what_agent_query_added(text: str, written: str) -> None:
    assert agent_query(text) != written or "." not in text
    assert as_written(agent_query(text)) == written
