/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <yaml.h>

#include "yamltree.h"

const char *ynode_type_name(enum ynode_type t) {
        switch (t) {
        case YNODE_SCALAR:
                return "a value";
        case YNODE_MAP:
                return "a mapping";
        case YNODE_SEQ:
                return "a list";
        }
        return "?";
}

bool ynode_is_null(const struct ynode *n) {
        assert(n);
        return n->type == YNODE_SCALAR && n->plain &&
               (n->value[0] == '\0' || streq(n->value, "~") || streq(n->value, "null"));
}

static const struct ynode *ymap_get(const struct ynode *map, const char *key) {
        const struct ynode *k, *v;

        if (!map || map->type != YNODE_MAP)
                return NULL;
        YMAP_FOREACH(k, v, map, i)
        if (streq(k->value, key))
                return v;
        return NULL;
}

const struct ynode *ymap_where(const struct ynode *map, const char *path, const struct ynode *fallback) {
        char buf[128];
        const struct ynode *n = map;

        assert(path);
        snprintf(buf, sizeof(buf), "%s", path);
        for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
                n = ymap_get(n, tok);
                if (!n)
                        return fallback;
        }
        return n;
}

void ynode_free(struct ynode *n) {
        if (!n)
                return;
        for (size_t i = 0; i < n->n_children; i++)
                ynode_free(n->children[i]);
        free(n->children);
        free(n->value);
        free(n);
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *p, size_t n) {
        size_t len;
        uint32_t cp;

        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xC2 && p[0] <= 0xDF) {
                len = 2;
                cp = p[0] & 0x1F;
        } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
                len = 3;
                cp = p[0] & 0x0F;
        } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
                len = 4;
                cp = p[0] & 0x07;
        } else
                return 0;
        if (n < len)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((p[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3F);
        }
        /* Overlong forms, surrogates and values past U+10FFFF. */
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        return len;
}

/*
 * Reports tabs, control characters (NUL included) and invalid UTF-8 at their
 * positions, at most one per line, and returns a copy of the text in which
 * they are replaced by spaces or '?' so that parsing can go on and find the
 * other errors of the file.
 */
static char *prescan(const struct source *src, struct diag_list *diags, bool *ret_bad) {
        const unsigned char *p = (const unsigned char *) src->text;
        const unsigned char *end = p + src->size;
        unsigned line = 1, column = 1, reported_line = 0;
        char *copy = malloc(src->size + 1), *q = copy;

        if (!copy)
                return NULL;
        *ret_bad = false;
        /* A UTF-8 byte order mark is allowed at the very start. */
        if (src->size >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
                memcpy(q, p, 3);
                p += 3;
                q += 3;
        }
        while (p < end) {
                const char *problem = NULL;
                size_t len = utf8_valid_len(p, (size_t) (end - p));
                char repl = '?';

                if (len == 0) {
                        problem = "invalid UTF-8: policy files must be UTF-8 text";
                        len = 1;
                } else if (*p == '\t') {
                        problem = "tab character: indent with spaces";
                        repl = ' ';
                } else if (*p == '\0')
                        problem = "NUL byte: this is not a text file";
                else if ((*p < 0x20 && *p != '\n' && *p != '\r') || *p == 0x7F)
                        problem = "control character in file";

                if (problem) {
                        *ret_bad = true;
                        if (reported_line != line) {
                                diag_add(diags, src, line, column, "%s", problem);
                                reported_line = line;
                        }
                        *q++ = repl;
                        p += len;
                        column++;
                        continue;
                }
                memcpy(q, p, len);
                q += len;
                if (*p == '\n') {
                        line++;
                        column = 1;
                } else
                        column++;
                p += len;
        }
        *q = '\0';
        return copy;
}

struct builder {
        const struct source *src;
        struct diag_list *diags;
        struct ynode *root;
        struct ynode *stack[YTREE_MAX_DEPTH];
        unsigned depth;
        size_t nodes;
        unsigned documents;
        bool failed;
        bool stop; /* too deep, or too many nodes: parsing stops */
        bool oom;  /* out of memory: parsing stops */
};

_printf_(3, 4) static void builder_error(struct builder *b, const yaml_mark_t *m, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        diag_addv(b->diags, b->src, (unsigned) m->line + 1, (unsigned) m->column + 1, fmt, ap);
        va_end(ap);
        b->failed = true;
}

_printf_(3, 4) static void builder_error_at(struct builder *b, const struct ynode *n, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        diag_addv(b->diags, b->src, n->line, n->column, fmt, ap);
        va_end(ap);
        b->failed = true;
}

/* A new node, or NULL with b->oom set. */
static struct ynode *ynode_new(struct builder *b, enum ynode_type type, const yaml_mark_t *m) {
        struct ynode *n = calloc(1, sizeof(*n));

        if (!n) {
                b->oom = true;
                return NULL;
        }
        n->type = type;
        n->line = (unsigned) m->line + 1;
        n->column = (unsigned) m->column + 1;
        return n;
}

/* A new scalar node holding value[0..len), or NULL with b->oom set. */
static struct ynode *scalar_new(struct builder *b, const yaml_mark_t *m, const char *value, size_t len) {
        struct ynode *n = ynode_new(b, YNODE_SCALAR, m);

        if (!n)
                return NULL;
        n->value = strndup(value, len);
        if (!n->value) {
                ynode_free(n);
                b->oom = true;
                return NULL;
        }
        return n;
}

/* Attaches n to the open collection on top of the stack (or makes it the root); false (n freed) when out
 * of memory. */
static bool builder_attach(struct builder *b, struct ynode *n) {
        struct ynode *parent;

        if (b->depth == 0) {
                if (b->root) /* cannot happen with one document, but never leak */
                        ynode_free(b->root);
                b->root = n;
                return true;
        }
        parent = b->stack[b->depth - 1];
        if (parent->type == YNODE_MAP && parent->n_children % 2 == 0 && n->type != YNODE_SCALAR) {
                /* n is a key (duplicates are found when the map ends). */
                diag_add(b->diags, b->src, n->line, n->column, "mapping keys must be plain names, not %s",
                         ynode_type_name(n->type));
                b->failed = true;
                n->duplicate = true; /* ignore this pair */
        }
        if (GROW(parent->children, parent->allocated, parent->n_children + 1) < 0) {
                ynode_free(n);
                b->oom = true;
                return false;
        }
        parent->children[parent->n_children++] = n;
        return true;
}

/* Keys by name, then in the order they were written (positions grow through the document). */
static int key_cmp(const void *a, const void *b) {
        const struct ynode *x = *(const struct ynode *const *) a, *y = *(const struct ynode *const *) b;
        int c = strcmp(x->value, y->value);

        if (c != 0)
                return c;
        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        return x->column < y->column ? -1 : x->column > y->column;
}

/*
 * Marks (and reports) every key of map that an earlier key of it has
 * already given.  Sorted, not compared pairwise: a map of 100,000 keys
 * took minutes that way.
 */
static void map_check_duplicates(struct builder *b, struct ynode *map) {
        struct ynode *small[16], **keys = small;
        size_t n = 0;

        if (map->n_children <= 2)
                return;
        if ((map->n_children + 1) / 2 > ELEMENTSOF(small)) {
                keys = malloc((map->n_children + 1) / 2 * sizeof(*keys));
                if (!keys) {
                        b->oom = true;
                        return;
                }
        }
        for (size_t i = 0; i < map->n_children; i += 2)
                if (!map->children[i]->duplicate) /* not a scalar: reported already */
                        keys[n++] = map->children[i];
        qsort(keys, n, sizeof(*keys), key_cmp);
        for (size_t i = 1, first = 0; i < n; i++) {
                if (!streq(keys[i]->value, keys[first]->value)) {
                        first = i;
                        continue;
                }
                builder_error_at(b, keys[i], "duplicate key '%s' (first given at line %u)", keys[i]->value,
                                 keys[first]->line);
                keys[i]->duplicate = true;
        }
        if (keys != small)
                free(keys);
}

/* A collection ends: maps are checked for duplicate keys. */
static void builder_close(struct builder *b) {
        struct ynode *n = b->stack[--b->depth];

        if (n->type == YNODE_MAP)
                map_check_duplicates(b, n);
}

static bool builder_check_properties(struct builder *b, const yaml_event_t *e, const unsigned char *anchor,
                                     const unsigned char *tag) {
        bool ok = true;

        if (anchor) {
                builder_error(b, &e->start_mark, "YAML anchors ('&%s') are not allowed in policy files",
                              (const char *) anchor);
                ok = false;
        }
        if (tag) {
                builder_error(b, &e->start_mark, "YAML tags ('%s') are not allowed in policy files",
                              (const char *) tag);
                ok = false;
        }
        return ok;
}

/* Counts a node about to be read; false (and parsing stops) past YTREE_MAX_NODES. */
static bool builder_count(struct builder *b, const yaml_event_t *e) {
        if (++b->nodes <= YTREE_MAX_NODES)
                return true;
        builder_error(b, &e->start_mark, "more than %d values, lists and mappings in one file (reading stops here)",
                      YTREE_MAX_NODES);
        b->stop = true;
        return false;
}

static void builder_event(struct builder *b, const yaml_event_t *e) {
        struct ynode *n;

        if ((e->type == YAML_SCALAR_EVENT || e->type == YAML_SEQUENCE_START_EVENT ||
             e->type == YAML_MAPPING_START_EVENT || e->type == YAML_ALIAS_EVENT) &&
            !builder_count(b, e))
                return;

        switch (e->type) {
        case YAML_DOCUMENT_START_EVENT:
                break;

        case YAML_SCALAR_EVENT:
                builder_check_properties(b, e, e->data.scalar.anchor,
                                         e->data.scalar.plain_implicit || e->data.scalar.quoted_implicit
                                                 ? NULL
                                                 : e->data.scalar.tag);
                n = scalar_new(b, &e->start_mark, (const char *) e->data.scalar.value, e->data.scalar.length);
                if (!n)
                        break;
                n->plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                if (strlen(n->value) != e->data.scalar.length) {
                        builder_error(b, &e->start_mark, "%s", "NUL character in a value");
                        n->value[0] = '\0';
                }
                builder_attach(b, n);
                break;

        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
                bool map = e->type == YAML_MAPPING_START_EVENT;

                if (b->depth >= YTREE_MAX_DEPTH) {
                        /* Stop at once: libyaml's cost grows with the square of the depth of flow collections
                         * ("[[[[..."), and nothing deeper is worth reading. */
                        builder_error(b, &e->start_mark,
                                      "nesting is too deep: at most %d levels of mappings and lists (reading stops "
                                      "here)",
                                      YTREE_MAX_DEPTH);
                        b->stop = true;
                        break;
                }
                builder_check_properties(b, e, map ? e->data.mapping_start.anchor : e->data.sequence_start.anchor,
                                         map ? (e->data.mapping_start.implicit ? NULL : e->data.mapping_start.tag)
                                             : (e->data.sequence_start.implicit ? NULL : e->data.sequence_start.tag));
                n = ynode_new(b, map ? YNODE_MAP : YNODE_SEQ, &e->start_mark);
                if (!n || !builder_attach(b, n))
                        break;
                b->stack[b->depth++] = n;
                break;
        }

        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                if (b->depth > 0)
                        builder_close(b);
                break;

        case YAML_ALIAS_EVENT:
                /* Aliases allow documents that expand exponentially: refuse them. */
                builder_error(b, &e->start_mark, "YAML aliases ('*%s') are not allowed in policy files",
                              (const char *) e->data.alias.anchor);
                /* Keep the structure (a map needs its value) with an empty scalar. */
                n = scalar_new(b, &e->start_mark, "", 0);
                if (n)
                        builder_attach(b, n);
                break;

        default:
                break;
        }
}

int ytree_parse(const struct source *src, struct diag_list *diags, struct ynode **ret) {
        _cleanup_free_ char *text = NULL;
        struct builder b = { .src = src, .diags = diags };
        yaml_parser_t parser;
        bool bad_bytes;

        assert(src);
        assert(diags);
        assert(ret);
        *ret = NULL;
        if (src->size > YTREE_MAX_FILE_SIZE) {
                diag_add(diags, src, 0, 0, "file is larger than 1 MiB (%d bytes)", YTREE_MAX_FILE_SIZE);
                return diags->oom ? -ENOMEM : -EINVAL;
        }
        text = prescan(src, diags, &bad_bytes);
        if (!text)
                return -ENOMEM;
        b.failed = bad_bytes;

        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, src->size);
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

        for (;;) {
                yaml_event_t e;

                if (!yaml_parser_parse(&parser, &e)) {
                        const yaml_mark_t *m = &parser.problem_mark;
                        unsigned line = (unsigned) m->line + 1, column = (unsigned) m->column + 1;

                        if (parser.error == YAML_MEMORY_ERROR) {
                                yaml_parser_delete(&parser);
                                ynode_free(b.root);
                                return -ENOMEM;
                        }
                        if (parser.context)
                                diag_add(diags, src, line, column, "YAML syntax error: %s %s", parser.problem,
                                         parser.context);
                        else
                                diag_add(diags, src, line, column, "YAML syntax error: %s",
                                         parser.problem ?: "unknown problem");
                        b.failed = true;
                        break;
                }
                if (e.type == YAML_DOCUMENT_START_EVENT && ++b.documents > 1) {
                        diag_add(diags, src, (unsigned) e.start_mark.line + 1, (unsigned) e.start_mark.column + 1,
                                 "more than one YAML document in a file ('---'): put each in its own file");
                        b.failed = true;
                        yaml_event_delete(&e);
                        break;
                }
                builder_event(&b, &e);
                if (e.type == YAML_STREAM_END_EVENT || b.oom || b.stop) {
                        yaml_event_delete(&e);
                        break;
                }
                yaml_event_delete(&e);
        }
        yaml_parser_delete(&parser);
        /* Parsing stopped early: the collections still open are checked as they are. */
        while (b.depth > 0 && !b.oom)
                builder_close(&b);

        if (b.oom || diags->oom) {
                ynode_free(b.root);
                return -ENOMEM;
        }
        /* A document that is only "---" (or "~") has no content. */
        if (b.root && ynode_is_null(b.root)) {
                ynode_free(b.root);
                b.root = NULL;
        }
        *ret = b.root;
        return b.failed ? -EINVAL : 0;
}
