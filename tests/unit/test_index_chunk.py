"""esqlog index's chunking, per language, on real-looking code (I/O-free).

Each snippet is the shape of real code (Go's strings.Builder, Python's textwrap, a Java
service, a Rails model, an Express handler, a TypeScript store, Rust's impl blocks, a C
list, a C++ class): the expected (symbol, kind, first line, last line) of every chunk is
written out by hand. Every case also checks that the chunks tile the file: joined in
order they give the file back, so nothing is lost.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from esqlog.indexing.chunk import ChunkLimits, chunk_text
from esqlog.indexing.languages import QUERIES, language_of
from tests.support.sources import GO, JAVA

GO_CHUNKS = [
    (None, "code", 1, 5),
    ("Builder", "type", 6, 11),
    ("Builder.Len", "method", 12, 14),
    ("Builder.WriteRune", "method", 15, 21),
    (None, "code", 22, 23),
    ("Repeat", "function", 24, 26),
]

PYTHON = '''\
"""Text wrapping and filling."""

import re

__all__ = ['TextWrapper', 'wrap']


class TextWrapper:
    """Object for wrapping/filling text."""

    unicode_whitespace_trans = {}

    def __init__(self, width=70):
        self.width = width

    # -- Private methods -----------------------------------------------
    @staticmethod
    def _split(text):
        def helper(chunk):
            return chunk
        return [helper(c) for c in re.split(r'(\\s+)', text)]


def wrap(text, width=70, **kwargs):
    w = TextWrapper(width=width, **kwargs)
    return w.wrap(text)

if __name__ == "__main__":
    print(wrap("hello"))
'''
PYTHON_CHUNKS = [
    (None, "code", 1, 7),
    ("TextWrapper", "class", 8, 12),
    ("TextWrapper.__init__", "method", 13, 15),
    ("TextWrapper._split", "method", 16, 23),
    ("wrap", "function", 24, 27),
    (None, "code", 28, 29),
]

JAVA_CHUNKS = [
    (None, "code", 1, 4),
    ("OrderService", "class", 5, 9),
    ("OrderService.OrderService", "method", 10, 13),
    ("OrderService.ordersOf", "method", 14, 19),
    ("OrderService.Status", "class", 20, 21),
]

RUBY = """\
require "active_record"

module Billing
  # An invoice sent to a customer.
  class Invoice < ApplicationRecord
    belongs_to :customer

    def self.overdue
      where("due_on < ?", Date.today)
    end

    def total
      lines.sum(&:amount)
    end
  end
end
"""
RUBY_CHUNKS = [
    (None, "code", 1, 2),
    ("Billing", "class", 3, 3),
    ("Billing.Invoice", "class", 4, 7),
    ("Billing.Invoice.overdue", "method", 8, 11),
    ("Billing.Invoice.total", "method", 12, 16),
]

JAVASCRIPT = """\
const express = require("express");
const router = express.Router();

/** Look a user up by id. */
async function findUser(id) {
  return db.users.get(id);
}

export const handler = async (req, res) => {
  res.json(await findUser(req.params.id));
};

export class Cache {
  constructor() {
    this.map = new Map();
  }

  get(key) {
    return this.map.get(key);
  }
}
"""
JAVASCRIPT_CHUNKS = [
    (None, "code", 1, 3),
    ("findUser", "function", 4, 8),
    ("handler", "function", 9, 12),
    ("Cache", "class", 13, 13),
    ("Cache.constructor", "method", 14, 17),
    ("Cache.get", "method", 18, 21),
]

TYPESCRIPT = """\
import { Injectable } from "@angular/core";

export interface Todo {
  id: number;
  title: string;
}

@Injectable()
export class TodoStore {
  private todos: Todo[] = [];

  add(title: string): Todo {
    const todo = { id: this.todos.length, title };
    this.todos.push(todo);
    return todo;
  }
}
"""
TYPESCRIPT_CHUNKS = [
    (None, "code", 1, 2),
    ("Todo", "class", 3, 7),
    ("TodoStore", "class", 8, 11),
    ("TodoStore.add", "method", 12, 17),
]

RUST = """\
use std::fmt;

/// A point in the plane.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    x: f64,
    y: f64,
}

impl Point {
    /// The distance to the origin.
    pub fn norm(&self) -> f64 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}
"""
RUST_CHUNKS = [
    (None, "code", 1, 2),
    ("Point", "type", 3, 9),
    ("Point", "class", 10, 10),
    ("Point.norm", "method", 11, 16),
    ("Point", "class", 17, 17),
    ("Point.fmt", "method", 18, 21),
]

C = """\
#include <stdlib.h>

/* A singly linked list node. */
typedef struct node {
    int value;
    struct node *next;
} node_t;

/* Prepend value; returns the new head. */
static node_t *list_push(node_t *head, int value)
{
    node_t *n = malloc(sizeof *n);
    n->value = value;
    n->next = head;
    return n;
}

int list_len(const node_t *head) {
    int n = 0;
    for (; head; head = head->next) n++;
    return n;
}
"""
C_CHUNKS = [
    (None, "code", 1, 2),
    ("node_t", "type", 3, 8),
    ("list_push", "function", 9, 17),
    ("list_len", "function", 18, 22),
]

CPP = """\
#include <string>

namespace net {

class Url {
 public:
  explicit Url(std::string spec) : spec_(std::move(spec)) {}

  bool IsValid() const {
    return !spec_.empty();
  }

 private:
  std::string spec_;
};

template <typename T>
T Clamp(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

}  // namespace net
"""
CPP_CHUNKS = [
    (None, "code", 1, 2),
    ("net", "module", 3, 4),
    ("net.Url", "class", 5, 6),
    ("net.Url.Url", "method", 7, 8),
    ("net.Url.IsValid", "method", 9, 12),
    ("net.Url", "class", 13, 16),
    ("net.Clamp", "function", 17, 21),
    ("net", "module", 22, 22),
]

CASES = {
    "go": (GO, GO_CHUNKS),
    "python": (PYTHON, PYTHON_CHUNKS),
    "java": (JAVA, JAVA_CHUNKS),
    "ruby": (RUBY, RUBY_CHUNKS),
    "javascript": (JAVASCRIPT, JAVASCRIPT_CHUNKS),
    "typescript": (TYPESCRIPT, TYPESCRIPT_CHUNKS),
    "rust": (RUST, RUST_CHUNKS),
    "c": (C, C_CHUNKS),
    "cpp": (CPP, CPP_CHUNKS),
}


def _tiles(text: str, language: str, limits: ChunkLimits | None = None) -> list:
    chunks = chunk_text(text, language, limits)
    if not chunks:
        assert not any(ch.isalnum() for ch in text)
        return chunks
    assert "".join(c.content for c in chunks) == (text if text.endswith("\n") else text + "\n")
    for before, after in itertools.pairwise(chunks):
        assert after.start_line == before.end_line + 1
    for c in chunks:
        assert c.end_line - c.start_line + 1 == c.content.count("\n")
    return chunks


@pytest.mark.parametrize("language", sorted(CASES))
def test_one_chunk_per_symbol(language: str) -> None:
    text, expected = CASES[language]
    chunks = _tiles(text, language)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == expected


def test_every_grammar_language_has_a_case() -> None:
    assert set(QUERIES) - {"tsx"} == set(CASES)
    tsx = "export function App() {\n  return <div>hi</div>;\n}\n"
    assert [(c.symbol, c.kind) for c in _tiles(tsx, "tsx")] == [("App", "function")]


def test_doc_comments_and_decorators_stay_with_their_function() -> None:
    chunks = {c.symbol: c.content for c in chunk_text(PYTHON, "python")}
    assert chunks["TextWrapper._split"].startswith("    # -- Private methods")
    assert "@staticmethod" in chunks["TextWrapper._split"]
    assert chunks["wrap"].startswith("def wrap(")
    go = {c.symbol: c.content for c in chunk_text(GO, "go")}
    assert go["Builder.WriteRune"].startswith("// WriteRune appends")


def test_every_go_type_is_a_symbol_one_line_and_grouped_ones_too() -> None:
    """gin's ``type formSource map[string][]string`` had no definition entry: only struct
    and interface types were symbols."""
    text = (
        "package binding\n\n// formSource is a form.\ntype formSource map[string][]string\n"
        "\ntype (\n\t// A counts.\n\tA int\n\tB = string\n)\n\ntype G[T any] []T\n"
    )
    chunks = _tiles(text, "go")
    assert [(c.symbol, c.kind, c.start_line) for c in chunks if c.symbol] == [
        ("formSource", "type", 3),
        ("A", "type", 7),
        ("B", "type", 9),
        ("G", "type", 12),
    ]


def test_a_trailing_comment_is_not_taken_as_the_next_functions_doc() -> None:
    text = "int a(void) { return 1; } /* about a */\nint b(void) { return 2; }\n"
    chunks = _tiles(text, "c")
    assert [(c.symbol, c.start_line) for c in chunks] == [("a", 1), ("b", 2)]


def test_long_functions_are_windowed_within_the_limits() -> None:
    body = "".join(f"    x{i} = {i}\n" + ("\n" if i % 40 == 39 else "") for i in range(400))
    text = f"def big():\n{body}"
    limits = ChunkLimits(max_lines=150, max_chars=4000)
    chunks = _tiles(text, "python", limits)
    assert len(chunks) > 2
    assert all(c.symbol == "big" and c.kind == "function" for c in chunks)
    assert all(c.end_line - c.start_line + 1 <= 150 and len(c.content) <= 4000 for c in chunks)
    assert sum(c.content.endswith("\n\n") for c in chunks[:-1]) >= 1  # cut at blank lines


def test_files_without_a_grammar_are_cut_into_text_windows() -> None:
    text = "".join(f"paragraph {i} line {j}\n" for i in range(30) for j in range(10))
    chunks = _tiles(text, "markdown", ChunkLimits(max_lines=100))
    assert [c.kind for c in chunks] == ["text"] * 3 and {c.symbol for c in chunks} == {None}


def test_text_without_words_has_no_chunks_and_wordless_lines_join_a_neighbour() -> None:
    assert chunk_text("\n\n  }\n", "go") == []
    assert chunk_text("", "python") == []
    chunks = _tiles("\n\nfunc a() {}\n\n}\n", "go")
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("a", 1, 5)]


def test_line_numbers_count_newlines_only() -> None:
    text = "x = 1\n\x0c\ndef f():\n    return 1\n"  # a form feed, as CPython's sources have
    chunks = _tiles(text, "python")
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [(None, 1, 2), ("f", 3, 4)]


def test_broken_code_still_tiles() -> None:
    chunks = _tiles("def ok():\n    pass\n\ndef broken(:\n    ((\n", "python")
    assert chunks[0].symbol == "ok"


def test_language_by_name() -> None:
    assert [
        language_of(p)
        for p in ("a/b.go", "x.PY", "Makefile", "t.tsx", "inc/x.h", "README", "doc.md")
    ] == ["go", "python", "make", "tsx", "cpp", "text", "markdown"]


def test_esqlogs_own_sources_tile() -> None:
    """Every Python file of this package: the tiling holds on real code as it is."""
    root = Path(__file__).resolve().parents[2] / "esqlog"
    files = sorted(root.rglob("*.py"))
    assert len(files) > 50
    symbols = 0
    for path in files:
        chunks = _tiles(path.read_text(encoding="utf-8"), "python")
        symbols += sum(c.symbol is not None for c in chunks)
    assert symbols > 500
