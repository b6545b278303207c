module esqlog/goextract

go 1.18
