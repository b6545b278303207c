// Command goextract prints one JSON line per top-level Go function or method
// found under the directories given as arguments.
//
// It exists so that the corpus builder uses Go's own parser (go/parser,
// go/ast) instead of regular expressions: doc comments, receivers and exact
// source spans come straight from the AST. Only the standard library is used,
// so it builds with any Go toolchain >= 1.18 and needs no module download.
//
// Usage: goextract ROOT [ROOT...]   (file paths are printed relative to ROOT,
// prefixed by the ROOT's base name only when several roots are given.)
// Alternatively: goextract -files LISTFILE BASE reads absolute file paths, one
// per line, and prints paths relative to BASE.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// record is one function as handed to the Python side.
type record struct {
	Path string `json:"path"` // file path relative to the source root
	Name string `json:"name"` // bare identifier (what name deletion removes)
	Recv string `json:"recv"` // receiver base type, "" for plain functions
	Doc  string `json:"doc"`  // raw doc comment including // or /* markers
	Code string `json:"code"` // source from `func` to the closing brace, no doc
	Line int    `json:"line"` // 1-based line of `func`, for debugging only
}

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// skipDir reports whether a directory holds test fixtures or vendored copies,
// which would add duplicate or non-idiomatic code to the corpus.
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") ||
		strings.HasPrefix(name, "_")
}

// wantFile keeps ordinary, non-test Go source files.
func wantFile(path string) bool {
	return strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
}

// recvName returns the base type name of a method receiver (without * or
// type parameters), so that methods can be told apart in ids.
func recvName(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// extract parses one file and writes a record per function that has a body.
func extract(enc *json.Encoder, abs, rel string) error {
	src, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	// Only the header matters for the generated-code marker; searching the
	// whole file would also hit string literals in code generators.
	head := src
	if len(head) > 4096 {
		head = head[:4096]
	}
	if generated.Match(head) {
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, abs, src, parser.ParseComments)
	if err != nil {
		return nil // files for other build tags or broken fixtures: skip quietly
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Pos())
		end := fset.Position(fd.End())
		doc := ""
		if fd.Doc != nil {
			ds := fset.Position(fd.Doc.Pos()).Offset
			de := fset.Position(fd.Doc.End()).Offset
			doc = string(src[ds:de])
		}
		rec := record{
			Path: rel,
			Name: fd.Name.Name,
			Recv: recvName(fd.Recv),
			Doc:  doc,
			Code: string(src[start.Offset:end.Offset]),
			Line: start.Line,
		}
		if err := enc.Encode(&rec); err != nil {
			return err
		}
	}
	return nil
}

// walkRoot lists wanted files under root in lexical order, for reproducibility.
func walkRoot(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if wantFile(p) && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

func main() {
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	args := os.Args[1:]
	if len(args) == 3 && args[0] == "-files" {
		data, err := os.ReadFile(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		base := args[2]
		for _, p := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if p == "" || !wantFile(p) {
				continue
			}
			rel, _ := filepath.Rel(base, p)
			if err := extract(enc, p, filepath.ToSlash(rel)); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
		return
	}
	for _, root := range args {
		files, err := walkRoot(root)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, p := range files {
			rel, _ := filepath.Rel(root, p)
			if len(args) > 1 {
				rel = filepath.Join(filepath.Base(root), rel)
			}
			if err := extract(enc, p, filepath.ToSlash(rel)); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
}
