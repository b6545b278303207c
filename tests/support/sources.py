"""Shared by several test modules (from tests/test_index_chunk.py):
no test module imports another."""

from __future__ import annotations

GO = """\
// Package strings implements simple functions.
package strings

import "unicode/utf8"

// A Builder is used to efficiently build a string.
type Builder struct {
	addr *Builder
	buf  []byte
}

// Len returns the number of accumulated bytes.
func (b *Builder) Len() int { return len(b.buf) }

// WriteRune appends the UTF-8 encoding of Unicode code point r.
func (b *Builder) WriteRune(r rune) (int, error) {
	n := len(b.buf)
	b.buf = utf8.AppendRune(b.buf, r)
	return len(b.buf) - n, nil
}

const maxInt = int(^uint(0) >> 1)

func Repeat(s string, count int) string {
	return s
}
"""


JAVA = """\
package org.example.orders;

import java.util.List;

/** Places and lists orders. */
@Service
public class OrderService {
    private final OrderRepository repository;

    public OrderService(OrderRepository repository) {
        this.repository = repository;
    }

    /** Every order of one customer, newest first. */
    @Transactional(readOnly = true)
    public List<Order> ordersOf(long customerId) {
        return repository.findByCustomer(customerId);
    }

    enum Status { OPEN, SHIPPED }
}
"""
