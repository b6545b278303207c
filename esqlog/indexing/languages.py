"""Which language a file is in, and where its functions and classes are (tree-sitter).

Why queries: a tree-sitter query runs in C over the whole syntax tree, so finding the
symbols of a 100 KB file costs no Python per node; Python only sees the few matches.
Captures: ``@function`` (a leaf: anything nested in it stays in it), ``@class`` (a
container: its methods become their own documents), ``@module`` (a container whose
functions stay functions: a C++ namespace, a Rust ``mod``), ``@type`` (a leaf type such as a
struct), ``@name`` (the symbol's name) and, for Go methods, ``@receiver``.

The grammars are the PyPI wheels of the ``index`` extra (``tree-sitter-go`` and so on);
scripts/corpora loads its parsers through :func:`grammar` too.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

#: file extension -> language; the ones in QUERIES are parsed, the others are chunked by lines
EXTENSIONS: dict[str, str] = {
    "go": "go",
    "java": "java",
    "py": "python",
    "pyi": "python",
    "rb": "ruby",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "rs": "rust",
    "c": "c",
    "h": "cpp",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hh": "cpp",
    "hpp": "cpp",
    "hxx": "cpp",
    "ipp": "cpp",
    "inl": "cpp",
    # line-chunked (no grammar in the extra): named so the language field is useful
    "s": "asm",
    "asm": "asm",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "md": "markdown",
    "rst": "rst",
    "txt": "text",
    "json": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "xml": "xml",
    "html": "html",
    "css": "css",
    "sql": "sql",
    "kt": "kotlin",
    "kts": "kotlin",
    "scala": "scala",
    "swift": "swift",
    "php": "php",
    "cs": "csharp",
    "pl": "perl",
    "pm": "perl",
    "lua": "lua",
    "r": "r",
    "m": "objc",
    "mm": "objc",
    "proto": "protobuf",
    "gradle": "gradle",
    "cmake": "cmake",
}
NAMES: dict[str, str] = {
    "Makefile": "make",
    "makefile": "make",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "Gemfile": "ruby",
    "Rakefile": "ruby",
}

_C_LIKE_TYPES = """
(struct_specifier name: (_) @name body: (_)) @type
(union_specifier name: (_) @name body: (_)) @type
(enum_specifier name: (_) @name body: (_)) @type
(type_definition type: [(struct_specifier body: (_)) (union_specifier body: (_))
                        (enum_specifier body: (_))] declarator: (_) @name) @type
"""
_JS = """
(function_declaration name: (_) @name) @function
(generator_function_declaration name: (_) @name) @function
(class_declaration name: (_) @name) @class
(method_definition name: (_) @name) @function
(lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression)])) @function
(variable_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression)])) @function
"""
_TS = (
    _JS
    + """
(abstract_class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @class
(enum_declaration name: (_) @name) @type
(internal_module name: (_) @name) @module
"""
)
QUERIES: dict[str, str] = {
    "go": """
(function_declaration name: (_) @name) @function
(method_declaration receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (_) @name) @function
(type_declaration "type" . [(type_spec name: (_) @name) (type_alias name: (_) @name)] .) @type
(type_declaration "(" [(type_spec name: (_) @name) (type_alias name: (_) @name)] @type)
""",
    "java": """
[(class_declaration) (interface_declaration) (enum_declaration) (record_declaration)
 (annotation_type_declaration)] @class
(method_declaration name: (_) @name) @function
(constructor_declaration name: (_) @name) @function
(compact_constructor_declaration name: (_) @name) @function
""",
    "python": """
(function_definition name: (_) @name) @function
(class_definition name: (_) @name) @class
""",
    "ruby": """
(method name: (_) @name) @function
(singleton_method name: (_) @name) @function
(class name: (_) @name) @class
(module name: (_) @name) @class
""",
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "rust": """
(function_item name: (_) @name) @function
(macro_definition name: (_) @name) @function
[(struct_item name: (_) @name) (enum_item name: (_) @name) (union_item name: (_) @name)] @type
(trait_item name: (_) @name) @class
(impl_item type: (_) @name) @class
(mod_item name: (_) @name body: (_)) @module
""",
    "c": "(function_definition) @function\n" + _C_LIKE_TYPES,
    "cpp": """
(function_definition) @function
(class_specifier name: (_) @name body: (_)) @class
(struct_specifier name: (_) @name body: (_)) @class
(union_specifier name: (_) @name body: (_)) @type
(enum_specifier name: (_) @name body: (_)) @type
(namespace_definition name: (_) @name) @module
""",
}
#: a symbol's wrapper (decorators, ``export``, ``template<...>``) belongs to its document
WRAPPERS = frozenset({"decorated_definition", "export_statement", "template_declaration"})
#: siblings just above a symbol that document it (doc comments, Rust attributes)
LEADING = frozenset({"comment", "line_comment", "block_comment", "attribute_item"})


def language_of(path: str) -> str:
    """The language of a repository path, from its name ("text" when unknown)."""
    name = path.rsplit("/", 1)[-1]
    if name in NAMES:
        return NAMES[name]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return EXTENSIONS.get(ext, "text")


def parsed_languages() -> tuple[str, ...]:
    """The languages chunked by symbol (documented in docs/indexing.md and --help)."""
    return tuple(QUERIES)


_MODULES = {
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
}


def grammar_module(lang: str) -> str:
    """The Python module of ``lang``'s grammar wheel (``tree_sitter_go``...)."""
    return _MODULES.get(lang, (f"tree_sitter_{lang}", ""))[0]


@cache
def grammar(lang: str) -> Any:
    """``lang``'s tree_sitter.Language, loaded once (ImportError when the wheel is missing)."""
    import tree_sitter

    module, function = _MODULES.get(lang, (f"tree_sitter_{lang}", "language"))
    return tree_sitter.Language(getattr(importlib.import_module(module), function)())


@cache
def symbol_query(lang: str) -> Any:
    """The compiled symbol query of ``lang`` (compiling costs milliseconds: once)."""
    import tree_sitter

    return tree_sitter.Query(grammar(lang), QUERIES[lang])


@cache
def parser(lang: str) -> Any:
    """A tree_sitter.Parser for ``lang`` (one per process and language)."""
    import tree_sitter

    return tree_sitter.Parser(grammar(lang))
