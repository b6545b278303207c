"""The agent-query benchmark's pure parts: the queries it writes (stack frames in each
language's own format, dotted module paths, doc sentences without the name, the words of a
format string), the gold it reads with language parsers, its rank rule and the rg
policy's keyword picking on such queries."""

from __future__ import annotations

from scripts.bench.agent_queries import gold_rank, median_inf
from scripts.bench.agent_query_build import (
    go_frame,
    java_frame,
    python_frame,
    python_module,
    without_name,
)
from scripts.bench.agent_query_defs import (
    first_sentence,
    go_defs,
    java_defs,
    python_defs,
    strip_format,
)
from scripts.bench.localize.run import Hit, keywords, parse_hits


def test_stack_frames_in_each_languages_format() -> None:
    assert (
        python_frame("httpx/_client.py", 812, "send")
        == 'File "httpx/_client.py", line 812, in send'
    )
    assert (
        go_frame("github.com/gin-gonic/gin", "Context.Next", True, "gin/context.go", 185)
        == "github.com/gin-gonic/gin.(*Context).Next(...)\n\tgin/context.go:185"
    )
    assert go_frame(
        "github.com/gin-gonic/gin/render", "PDF.Render", False, "gin/render/pdf.go", 18
    ).startswith("github.com/gin-gonic/gin/render.PDF.")
    assert (
        go_frame("github.com/spf13/viper", "GetString", False, "viper/viper.go", 9)
        == "github.com/spf13/viper.GetString(...)\n\tviper/viper.go:9"
    )
    assert (
        java_frame("com.squareup.javapoet", "TypeSpec.Builder.build", "TypeSpec.java", 500, False)
        == "at com.squareup.javapoet.TypeSpec$Builder.build(TypeSpec.java:500)"
    )
    assert (
        java_frame("com.squareup.javapoet", "CodeWriter.CodeWriter", "CodeWriter.java", 70, True)
        == "at com.squareup.javapoet.CodeWriter.<init>(CodeWriter.java:70)"
    )


def test_python_module_paths_as_imported() -> None:
    assert python_module("src/black/linegen.py") == "black.linegen"
    assert python_module("httpx/__init__.py") == "httpx"
    assert python_module("httpx/_transports/default.py") == "httpx._transports.default"


def test_doc_sentence_without_the_name_and_format_words() -> None:
    assert (
        without_name("Next should be used only inside middleware.", "Next")
        == "should be used only inside middleware."
    )
    assert (
        without_name("Alternative to `httpx.request()` that streams.", "request")
        == "Alternative to that streams."
    )
    assert without_name("NextPage is not Next.", "Next") == "NextPage is not."
    assert first_sentence("Sends a `GET` request.\n\n**Parameters**: x") == "Sends a `GET` request."
    assert (
        first_sentence("Returns the {@code TypeName} for e.g. this.\n@param x y")
        == "Returns the TypeName for e.g. this."
    )
    assert first_sentence("@param controlFlow the flow") == ""
    assert strip_format("%q is not valid value for %s") == "is not valid value for"
    assert strip_format("URL component '\x00' too long") == "URL component"


def test_gold_from_language_parsers() -> None:
    py = python_defs(
        "m.py",
        b"class A:\n    '''Doc one. Two.'''\n    def f(self):\n"
        b"        raise ValueError(f'bad {x} value here')\n",
    )
    assert [(d.qual, d.kind, d.start, d.end) for d in py] == [
        ("A", "class", 1, 4),
        ("A.f", "method", 3, 4),
    ]
    assert py[0].doc == "Doc one."
    assert py[1].errors == ["bad \x00 value here"]
    go = go_defs(
        "c.go",
        b"package gin\n\n// Next runs the chain.\nfunc (c *Context) Next() {"
        b'\n\treturn errors.New("no next handler")\n}\n',
    )
    assert [(d.qual, d.pointer, d.line, d.doc, d.errors) for d in go] == [
        ("Context.Next", True, 4, "Next runs the chain.", ["no next handler"])
    ]
    detached = go_defs("d.go", b"package x\n\n// Package x is a header.\n\nfunc F() {}\n")
    assert [(d.qual, d.doc) for d in detached] == [("F", "")]  # a blank line apart: no doc
    java = java_defs(
        "T.java",
        b"class T {\n  static class B {\n    /** Builds it. */\n"
        b"    T build() {\n"
        b'      throw new IllegalStateException("no name");\n'
        b"    }\n  }\n}\n",
    )
    assert [(d.qual, d.kind) for d in java] == [
        ("T", "class"),
        ("T.B", "class"),
        ("T.B.build", "method"),
    ]
    assert java[2].doc == "Builds it." and java[2].errors == ["no name"]


def test_rank_rule_and_median() -> None:
    gold = [{"path": "a.py", "start_line": 10, "end_line": 30, "line": 12}]
    body_hit = Hit(1, None, "a.py", 20, 30, "A.f", 0, True)
    def_hit = Hit(2, None, "a.py", 10, 19, "A.f", 0, True)
    assert gold_rank([body_hit, def_hit], {"style": "dotted", "gold": gold}) == (2, 1)
    assert gold_rank([body_hit, def_hit], {"style": "bug", "gold": gold}) == (1, 0)
    assert median_inf([1, None, None]) == float("inf")
    assert median_inf([1, 3, None]) == 3


def test_rg_keywords_on_agent_queries() -> None:
    sets = [{"send", "client", "line", "_client"}, {"netloc", "typespec", "build"}]
    assert keywords('File "httpx/_client.py", line 812, in send', sets)[:1] == ["_client"]
    assert "build" in keywords(
        "at com.squareup.javapoet.TypeSpec$Builder.build(TypeSpec.java:500)", sets
    )


def test_answers_are_read_up_to_an_entry_without_their_summary_line() -> None:
    """A listing's entry ends after its indented lines: the summary line, first in the older
    answers and last since, is never counted as part of an entry; a whole chunk's block ends
    before a closing summary line."""
    entries = "1. a.py:1-4 f\n   1| def f():\n2. b.py:5-9 g\n   5| def g():"
    summary = "2 hits shown; code: read_code(path, start_line, end_line)"
    for text in (f"{entries}\n{summary}", f"{summary}\n{entries}"):
        hits = parse_hits(text)
        assert [(h.path, h.start, h.end, h.listing) for h in hits] == [
            ("a.py", 1, 4, True),
            ("b.py", 5, 9, True),
        ]
        for h, last in zip(hits, ("   1| def f():", "   5| def g():"), strict=True):
            assert text[: h.end_offset].rstrip("\n").endswith(last)
    code = "--- [1] id=x path=a.py lines=1-2 symbol=f tokens=9\ndef f():\n    pass\n\n1 hit shown"
    (block,) = parse_hits(code)
    assert not block.listing and code[: block.end_offset].endswith("    pass\n\n")
