# ruff: noqa: E501 - code snippets keep their real one-line shape
"""Small real Go and Python source snippets for engine tests that need code-like text.

Taken from the shapes of standard-library functions; the larger benchmark corpora are built
by scripts/corpora from Debian source packages.
"""

SNIPPETS: list[str] = [
    "func ReadFile(name string) ([]byte, error) { f, err := Open(name); if err != nil { return nil, err }; defer f.Close() }",
    "func WriteFile(name string, data []byte, perm FileMode) error { f, err := OpenFile(name, O_WRONLY|O_CREATE|O_TRUNC, perm) }",
    "func (c *Conn) handleWebSocketUpgrade(w http.ResponseWriter, r *http.Request) error { hj, ok := w.(http.Hijacker) }",
    "def read_file(path, encoding='utf-8'):\n    with open(path, encoding=encoding) as f:\n        return f.read()",
    "func Join(elem ...string) string { return join(elem) }",
    "func (b *Buffer) ReadFrom(r io.Reader) (n int64, err error) { b.lastRead = opInvalid }",
    "def parse_header_links(value):\n    links = []\n    replace_chars = ' \\'\"'\n    return links",
    "func NewReader(rd io.Reader) *Reader { return NewReaderSize(rd, defaultBufSize) }",
    "func (r *Reader) ReadString(delim byte) (string, error) { full, frag, n, err := r.collectFragments(delim) }",
    "def urlsplit(url, scheme='', allow_fragments=True):\n    url, scheme, _coerce_result = _coerce_args(url, scheme)",
    "func Marshal(v any) ([]byte, error) { e := newEncodeState(); defer encodeStatePool.Put(e) }",
    "func Unmarshal(data []byte, v any) error { var d decodeState; err := checkValid(data, &d.scan) }",
    "func (s *Server) ListenAndServe() error { if s.shuttingDown() { return ErrServerClosed } }",
    "def dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True):\n    return _default_encoder.encode(obj)",
    "func Sprintf(format string, a ...any) string { p := newPrinter(); p.doPrintf(format, a); s := string(p.buf) }",
    "func (t Time) Format(layout string) string { const bufSize = 64; var b []byte }",
    "def splitext(p):\n    p = os.fspath(p)\n    return genericpath._splitext(p, sep, altsep, extsep)",
    "func Copy(dst Writer, src Reader) (written int64, err error) { return copyBuffer(dst, src, nil) }",
    "func (m *Map) LoadOrStore(key, value any) (actual any, loaded bool) { read := m.loadReadOnly() }",
    "def getLogger(name=None):\n    if not name or isinstance(name, str) and name == root.name:\n        return root",
]
