"""Unit tests of the corpus extraction rules (scripts/corpora) and the bundled sample."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.corpora.lang_go import go_query
from scripts.corpora.lang_java import javadoc_query, replace_inline_tags
from scripts.corpora.lang_man import split_page
from scripts.corpora.lang_python import clean_rest, parse_python
from scripts.corpora.lang_ruby import rdoc_query
from scripts.corpora.pipeline import Func, assemble, doc_id, pooled_extract, subsample
from scripts.corpora.text import (
    delete_name,
    first_sentence,
    strip_comment_markers,
    usable_query,
)

ROOT = Path(__file__).resolve().parents[2]

DATA = ROOT / "esqlog" / "data"

# --- comment markers and first sentences -------------------------------------------

GO_READFILE_DOC = """// ReadFile reads the named file and returns the contents.
// A successful call returns err == nil, not err == EOF.
// Because ReadFile reads the whole file, it does not treat an EOF from Read
// as an error to be reported."""


def test_strip_go_line_comment_markers():
    text = strip_comment_markers(GO_READFILE_DOC)
    assert text.startswith("ReadFile reads the named file")
    assert "//" not in text


def test_strip_javadoc_markers_keeps_content_lines():
    raw = "/**\n * Returns the length of this string.\n *\n * @return the length\n   */"
    assert strip_comment_markers(raw).split("\n") == [
        "Returns the length of this string.",
        "",
        "@return the length",
    ]


def test_strip_ruby_hash_markers():
    assert strip_comment_markers("  # Returns a new Array.\n  #   code\n") == (
        "Returns a new Array.\n  code"
    )


def test_first_sentence_stops_at_period_followed_by_space():
    assert first_sentence(strip_comment_markers(GO_READFILE_DOC)) == (
        "ReadFile reads the named file and returns the contents."
    )


def test_first_sentence_ignores_dots_inside_words_and_abbreviations():
    assert first_sentence("Open calls os.Open, e.g. for files in the U.S. archive. More.") == (
        "Open calls os.Open, e.g. for files in the U.S. archive."
    )


def test_first_sentence_uses_first_paragraph_only():
    assert first_sentence("Frob the widget\nwithout a period\n\nSecond paragraph.") == (
        "Frob the widget without a period"
    )


def test_go_query_drops_directives_and_doc_links():
    raw = "// Copy copies from [io.Reader] src to dst.\n//\n//go:noinline"
    assert go_query(raw) == "Copy copies from io.Reader src to dst."


def test_javadoc_query_renders_inline_tags_and_stops_at_block_tags():
    raw = """/**
     * Returns the {@code char} value at the
     * specified index. An index ranges from {@code 0}.
     * @param index the index
     */"""
    assert javadoc_query(raw) == "Returns the char value at the specified index."


def test_javadoc_inherit_doc_only_is_not_a_query():
    assert javadoc_query("/** {@inheritDoc} */") == ""
    assert javadoc_query("/**\n * {@inheritDoc}\n * @since 1.8\n */") == ""


def test_javadoc_link_labels_and_refs():
    text = "see {@link java.util.List#add(Object) add} and {@link #size()}"
    assert replace_inline_tags(text) == "see add and size"


def test_javadoc_paragraph_tag_ends_first_sentence():
    assert javadoc_query("/** Creates a reader<p>with a buffer */") == "Creates a reader"


def test_rest_roles_render_as_text():
    assert clean_rest("Return the :class:`~foo.Bar` for ``x`` and :func:`baz`.") == (
        "Return the Bar for x and baz."
    )
    assert clean_rest("Compare L{Headers} with C{other}.") == "Compare Headers with other."


def test_rdoc_query_skips_call_seq_and_markup():
    raw = (
        "# :call-seq:\n#   ary.first -> obj\n#\n"
        "# Returns the +first+ element of *self*. More.\n# @return [Object]"
    )
    assert rdoc_query(raw) == "Returns the first element of self."
    assert rdoc_query("# :nodoc:") == ""


# --- name deletion --------------------------------------------------------------------


def test_delete_name_removes_leading_identifier():
    assert delete_name("ReadFile reads the named file", ("ReadFile",)) == "reads the named file"


def test_delete_name_is_case_insensitive_whole_word():
    assert delete_name("Reader reads; the read method calls READ.", ("Read",)) == (
        "Reader reads; the method calls."
    )


def test_delete_name_handles_python_dunder_and_call_parens():
    assert delete_name("__init__() sets up the object", ("__init__",)) == "sets up the object"


def test_short_queries_are_unusable():
    assert not usable_query("Closes it.")
    assert usable_query("Closes the file.")


# --- doc comments removed from code ------------------------------------------------


def test_python_docstring_removed_from_document():
    src = '''class A:
    @property
    def size(self):
        """Return the :class:`int` size of ``self``.

        Longer text.
        """
        return len(self.items)
'''
    (f,) = parse_python(src, "a.py")
    assert f.qualname == "A.size"
    assert f.code == "@property\ndef size(self):\n    return len(self.items)"
    assert f.query == "Return the int size of self."
    assert f.names == ("size",)


def test_python_one_line_docstring_is_cut_out():
    (f,) = parse_python('def f(): "Do the thing now."; return 1\n', "a.py")
    assert f.code == "def f(): return 1"


def test_java_javadoc_removed_from_document():
    pytest.importorskip("tree_sitter_java")
    from scripts.corpora.lang_java import parse_java

    src = b"""class A {
    /**
     * Returns the hash code for this string.
     */
    @Override
    public int hashCode() {
        return h;
    }
}
"""
    (f,) = parse_java(src, "A.java")
    assert f.code == "@Override\npublic int hashCode() {\n    return h;\n}"
    assert f.query == "Returns the hash code for this string."
    assert f.qualname == "A.hashCode"


def test_ruby_comment_removed_from_document():
    pytest.importorskip("tree_sitter_ruby")
    from scripts.corpora.lang_ruby import parse_ruby

    src = b"""class Array
  # Returns a new array with the elements reversed.
  def reverse
    dup.reverse!
  end
end
"""
    (f,) = parse_ruby(src, "a.rb")
    assert f.code == "def reverse\n  dup.reverse!\nend"
    assert f.query == "Returns a new array with the elements reversed."


def test_rust_doc_comment_removed_attributes_kept_and_tests_skipped():
    pytest.importorskip("tree_sitter_rust")
    from scripts.corpora.lang_rust import parse_rust

    src = b"""/// Returns the [`Entry`] for the key, creating it. More here.
#[inline]
pub fn entry(&mut self, key: K) -> Entry<K> {
    fn helper() {}
    todo!()
}
#[cfg(test)]
mod tests {
    #[test]
    fn it_works() {}
}
impl<K> Map for HashMap<K> {
    /// Removes every *stale* entry from the map.
    fn purge(&mut self) {}
    #[test]
    fn not_this() {}
}
"""
    funcs = parse_rust(src, "cargo/x-1.0/src/lib.rs")
    assert [f.qualname for f in funcs] == ["entry", "HashMap::purge"]
    assert funcs[0].code.startswith("#[inline]\npub fn entry") and "helper" in funcs[0].code
    assert funcs[0].query == "Returns the Entry for the key, creating it."
    assert funcs[1].query == "Removes every stale entry from the map."


def test_rust_files_outside_tests_benches_examples():
    from scripts.corpora.lang_rust import _wanted

    assert _wanted("serde-1.0/src/de/mod.rs")
    assert not _wanted("serde-1.0/tests/de.rs")
    assert not _wanted("serde-1.0/benches/b.rs")
    assert not _wanted("serde-1.0/build.rs")


def test_c_kernel_doc_description_is_the_query():
    pytest.importorskip("tree_sitter_c")
    from scripts.corpora.lang_c import parse_c

    src = b"""/**
 * kfree_big() - free a buffer allocated by kmalloc_big.
 * @p: the buffer
 */
static void kfree_big(void *p)
{
\tkfree(p);
}

#ifdef CONFIG_X
/* Count the entries. Slowly. */
static int *
count_entries(struct list *l) { return 0; }
#endif

// SPDX-License-Identifier: GPL-2.0

int plain(void) { return 1; }
"""
    funcs = parse_c(src, "linux-6.1/mm/x.c")
    assert [f.qualname for f in funcs] == ["kfree_big", "count_entries", "plain"]
    assert funcs[0].query == "free a buffer allocated by kmalloc_big."
    assert funcs[0].code == "static void kfree_big(void *p)\n{\n\tkfree(p);\n}"
    assert funcs[1].query == "Count the entries."
    assert funcs[2].query == ""


@pytest.mark.skipif(
    shutil.which("go") is None and not Path("/usr/local/go/bin/go").exists(),
    reason="no Go toolchain",
)
def test_go_extractor_separates_doc_from_code(tmp_path):
    from scripts.corpora.lang_go import _run_extractor, build_extractor

    src = tmp_path / "src" / "x.go"
    src.parent.mkdir()
    src.write_text(
        "package x\n\n// Len returns the number of items.\n//\n//go:nosplit\n"
        "func (l *List[T]) Len() int { return l.n }\n\nfunc f() {}\n"
    )
    exe = build_extractor(tmp_path)
    funcs = list(_run_extractor(exe, [str(src)], str(tmp_path), "t"))
    assert [(f.path, f.qualname, f.query) for f in funcs] == [
        ("t/src/x.go", "List.Len", "Len returns the number of items."),
        ("t/src/x.go", "f", ""),
    ]
    assert funcs[0].code == "func (l *List[T]) Len() int { return l.n }"


def test_man_page_split():
    rendered = """LS(1)                     User Commands                    LS(1)

NAME
       ls, dir - list directory
       contents

SYNOPSIS
       ls [OPTION]... [FILE]...

GNU coreutils 9.1                 2022                           LS(1)
"""
    names, desc, rest = split_page(rendered)
    assert names == ["ls", "dir"]
    assert desc == "list directory contents"
    assert rest == "SYNOPSIS\n       ls [OPTION]... [FILE]..."


# --- ids, dedup, sampling --------------------------------------------------------------


def _funcs() -> list[Func]:
    return [
        Func("a.go", "Open", "func Open() {}", "Open opens the file for reading.", ("Open",)),
        Func("a.go", "Open", "func Open() {}", "Open opens it again here.", ("Open",)),  # dup code
        Func("a.go", "Close", "func Close() {}", "Close closes the file.", ("Close",)),
        Func("b.go", "Close", "func Close() { x() }", "Close closes the file.", ("Close",)),
        Func("b.go", "f", "func f() { y() }", "", ("f",)),
    ]


def test_assemble_dedups_docs_and_drops_ambiguous_queries():
    c = assemble(_funcs())
    assert [d["path"] + ":" + d["name"] for d in c.docs] == [
        "a.go:Open",
        "a.go:Close",
        "b.go:Close",
        "b.go:f",
    ]
    assert [q["text"] for q in c.queries] == ["Open opens the file for reading."]
    assert c.queries[0]["gold"] == doc_id("a.go", "Open", 0)
    assert [q["text"] for q in c.queries_noname] == ["opens the file for reading."]
    assert c.stats["dropped_duplicate_docs"] == 1
    assert c.stats["dropped_ambiguous_queries"] == 2


#: ids the shipped corpora's judgments refer to: a changed hash would orphan every gold id
FIXED_IDS = {
    ("a.go", "Open", 0): "94eb51eb0c38c660",
    ("a.go", "Open", 1): "0f62772517098269",
    ("pkg/io/file.go", "(*File).Read", 0): "ce06128707534482",
}


def test_ids_are_stable_and_ordinal_separates_overloads():
    """Against fixed ids and in another process with another hash seed: comparing a call
    with itself in one process would pass for an id built from hash() or id()."""
    for key, expected in FIXED_IDS.items():
        assert doc_id(*key) == expected
    assert doc_id("a.go", "Open", 0) != doc_id("a.go", "Open", 1)
    code = (
        "from scripts.corpora.pipeline import doc_id; "
        "print(doc_id('a.go', 'Open', 0), doc_id('pkg/io/file.go', '(*File).Read', 0))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert other.stdout.split() == [
        FIXED_IDS["a.go", "Open", 0],
        FIXED_IDS["pkg/io/file.go", "(*File).Read", 0],
    ]


def test_subsample_keeps_golds_consistent():
    funcs = [
        Func("p.go", f"F{i}", f"func F{i}() {{ {i} }}", f"F{i} does thing number {i}.", (f"F{i}",))
        for i in range(200)
    ]
    c = assemble(funcs)
    subsample(c, max_docs=50, max_queries=20, seed=7)
    ids = {d["id"] for d in c.docs}
    assert len(c.docs) == 50 and len(c.queries) == 20
    assert all(q["gold"] in ids for q in c.queries)
    assert {q["qid"] for q in c.queries_noname} <= {q["qid"] for q in c.queries}
    again = assemble(funcs)
    subsample(again, max_docs=50, max_queries=20, seed=7)
    assert again.docs == c.docs and again.queries == c.queries


# --- the bundled sample ------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_bundled_sample_is_consistent():
    docs = _read_jsonl(DATA / "sample_go_docs.jsonl.gz")
    queries = _read_jsonl(DATA / "sample_go_queries.jsonl")
    noname = _read_jsonl(DATA / "sample_go_queries_noname.jsonl")
    ids = [d["id"] for d in docs]
    assert 4000 <= len(docs) <= 6000
    assert len(set(ids)) == len(ids)
    assert all(set(d) == {"id", "text", "name", "path"} for d in docs)
    assert len({d["text"] for d in docs}) == len(docs)
    id_set = set(ids)
    for qs in (queries, noname):
        assert 500 <= len(qs) <= 1000
        assert len({q["qid"] for q in qs}) == len(qs)
        assert all(set(q) == {"qid", "text", "gold"} and q["gold"] in id_set for q in qs)
        assert all(usable_query(q["text"]) for q in qs)
    assert {q["qid"] for q in noname} <= {q["qid"] for q in queries}
    by_gold = {d["id"]: d for d in docs}
    # The doc comment is not part of the document, so the query text is not in it.
    assert sum(q["text"] in by_gold[q["gold"]]["text"] for q in queries) < len(queries) * 0.02


def _funcs_of(item: tuple[str, int]) -> list[Func]:
    """A parse function for pooled_extract (module level: it is pickled to the workers)."""
    path, count = item
    return [Func(path, f"f{i}", f"def f{i}(): pass") for i in range(count)]


def test_pooled_extract_keeps_item_order_across_workers(capsys: pytest.CaptureFixture[str]) -> None:
    items = [(f"p{i}.py", i % 3) for i in range(50)]
    funcs = list(pooled_extract("test", items, _funcs_of, chunksize=4))
    assert [(f.path, f.qualname) for f in funcs] == [
        (path, f"f{i}") for path, count in items for i in range(count)
    ]
    assert "test: 50/50 files" in capsys.readouterr().out


def _write_part(root: Path, name: str, ids: list[str]) -> None:
    part = root / name
    part.mkdir(parents=True)
    (part / "docs.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "text": f"code {i}", "name": i, "path": f"{name}/{i}"}) + "\n"
            for i in ids
        )
    )
    queries = json.dumps({"qid": f"q{ids[0]}", "text": "does the thing now", "gold": ids[0]})
    (part / "queries.jsonl").write_text(queries + "\n")
    (part / "queries_noname.jsonl").write_text("")


def test_mix_concatenates_parts_and_builds_missing_ones(tmp_path, monkeypatch):
    from scripts.corpora import mix

    monkeypatch.setattr(mix, "PARTS", ["a", "b"])
    _write_part(tmp_path, "a", ["1", "2"])
    built = []

    def build(name: str) -> None:
        built.append(name)
        _write_part(tmp_path, name, ["3"])

    meta = mix.build_mix(tmp_path, build)
    assert built == ["b"]
    assert meta["docs"] == 3 and meta["queries"] == 2 and meta["queries_noname"] == 0
    lines = (tmp_path / "mix" / "docs.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["1", "2", "3"]


def test_mix_refuses_a_repeated_id(tmp_path, monkeypatch):
    from scripts.corpora import mix

    monkeypatch.setattr(mix, "PARTS", ["a", "b"])
    _write_part(tmp_path, "a", ["1"])
    _write_part(tmp_path, "b", ["1"])
    with pytest.raises(SystemExit, match="document id 1 of b repeats"):
        mix.build_mix(tmp_path, lambda name: None)


def test_c_walk_survives_nesting_deeper_than_the_recursion_limit():
    pytest.importorskip("tree_sitter_c")
    from scripts.corpora.lang_c import parse_c

    depth = sys.getrecursionlimit() + 500
    src = f"int x = {'(' * depth}1{')' * depth};\nint f(void) {{ return 0; }}\n".encode()
    assert [f.qualname for f in parse_c(src, "linux-6.1/lib/x.c")] == ["f"]
