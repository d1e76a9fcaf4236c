/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Strict parsers for the values of the policy language.  They never print
 * and never allocate: on failure they return -EINVAL or -ERANGE and point
 * *ret_error at a static message that the caller attaches to a file
 * position.
 */

#include <stdint.h>

/* "max": no limit.  Stored as the largest value so that comparisons work. */
#define UNITS_MAX UINT64_MAX

/* Percentages are kept in hundredths of a percent: 100% == 10000. */
#define UNITS_PERCENT_ONE 100u
#define UNITS_PERCENT_FULL 10000u

/* 256, 256K, 1.5G, 256MiB, "1.5 GiB", 512B, 25% (of ram_bytes), max.  K/M/G/T and KiB/MiB/GiB/TiB are powers
 * of 1024 (KB, MB, ... are refused: they mean powers of 1000 to some). */
int units_parse_size(const char *s, uint64_t ram_bytes, uint64_t *ret, const char **ret_error);

/* Bytes per second: a size ("80M", "80 MiB") with an optional "/s", or max.  No percentages. */
int units_parse_bandwidth(const char *s, uint64_t *ret, const char **ret_error);

/* I/O operations per second: a plain integer or max. */
int units_parse_iops(const char *s, uint64_t *ret, const char **ret_error);

/* 500ms, 10s, 5m; returned in microseconds. */
int units_parse_duration(const char *s, uint64_t *ret_usec, const char **ret_error);

/* 0..100 with at most two decimals, e.g. 12.5%; in hundredths of a percent. */
int units_parse_percent(const char *s, uint32_t *ret, const char **ret_error);

/* A plain unsigned integer in [min, max]. */
int units_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret, const char **ret_error);

/* Exact, canonical renderings used by `check --print`: they parse back to the same value. */
void units_format_size(uint64_t v, char *buf, size_t len);        /* "268435456" or "max" */
void units_format_duration(uint64_t usec, char *buf, size_t len); /* "500ms", "2s", "1m" */
void units_format_percent(uint32_t v, char *buf, size_t len);     /* "12.5%" */

/* A length of time in seconds, for people: "1h02m", "3m05s", "12s". */
void units_format_runtime(uint64_t sec, char *buf, size_t len);

/* Human-readable, rounded (for comments and status): "256 MiB". */
void units_format_human(uint64_t v, char *buf, size_t len);
