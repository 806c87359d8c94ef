/* Dimension expressions of the model specs: "3*hidden", "hidden+mlp",
 * "2*head_dim+4*hidden". Deliberately tiny (integers, names from the spec's
 * dims, + - * and brackets) and overflow-checked, because a typo in a data
 * file must be an error with a position, never a silently wrong count. */
#include "models/spec.h"

#include <ctype.h>
#include <string.h>

typedef struct expr_ctx {
    const aitk_yaml_doc *doc;
    const aitk_yaml_node *dims, *node;
    const char *p;
    aitk_str *err;
    int depth;
} expr_ctx;

static aitk_status expr_sum(expr_ctx *c, long *out);

static void skip_space(expr_ctx *c)
{
    while (*c->p == ' ' || *c->p == '\t')
        c->p++;
}

static aitk_status dim_lookup(expr_ctx *c, const char *name, size_t len, long *out)
{
    const aitk_yaml_node *v = NULL;
    for (size_t i = 0; c->dims && c->dims->kind == AITK_YAML_MAP && i < c->dims->count; i++) {
        const char *k = c->dims->pairs[i].key->text;
        if (strlen(k) == len && strncmp(k, name, len) == 0) {
            v = c->dims->pairs[i].value;
            break;
        }
    }
    if (!v) {
        aitk_yaml_errorf(c->err, c->doc, c->node, "unknown dimension '%.*s' in '%s'", (int)len,
                         name, c->node->text);
        return AITK_E_PARSE;
    }
    v = aitk_yaml_figure(v);
    if (!v) {
        aitk_yaml_errorf(c->err, c->doc, c->node, "dimension '%.*s' has no value", (int)len, name);
        return AITK_E_PARSE;
    }
    return aitk_yaml_long(c->doc, v, out, c->err);
}

static aitk_status expr_atom(expr_ctx *c, long *out)
{
    skip_space(c);
    if (*c->p == '(') {
        if (++c->depth > 16) {
            aitk_yaml_errorf(c->err, c->doc, c->node, "expression nested too deeply");
            return AITK_E_PARSE;
        }
        c->p++;
        aitk_status st = expr_sum(c, out);
        if (st)
            return st;
        skip_space(c);
        if (*c->p != ')') {
            aitk_yaml_errorf(c->err, c->doc, c->node, "missing ')' in '%s'", c->node->text);
            return AITK_E_PARSE;
        }
        c->p++;
        c->depth--;
        return AITK_OK;
    }
    if (isdigit((unsigned char)*c->p)) {
        long v = 0;
        while (isdigit((unsigned char)*c->p)) {
            if (__builtin_mul_overflow(v, 10L, &v) ||
                __builtin_add_overflow(v, (long)(*c->p - '0'), &v)) {
                aitk_yaml_errorf(c->err, c->doc, c->node, "number too large in '%s'",
                                 c->node->text);
                return AITK_E_RANGE;
            }
            c->p++;
        }
        *out = v;
        return AITK_OK;
    }
    if (isalpha((unsigned char)*c->p) || *c->p == '_') {
        const char *start = c->p;
        while (isalnum((unsigned char)*c->p) || *c->p == '_')
            c->p++;
        return dim_lookup(c, start, (size_t)(c->p - start), out);
    }
    aitk_yaml_errorf(c->err, c->doc, c->node,
                     "expected a number, a dimension name or '(' at '%s' in '%s'", c->p,
                     c->node->text);
    return AITK_E_PARSE;
}

static aitk_status expr_product(expr_ctx *c, long *out)
{
    aitk_status st = expr_atom(c, out);
    for (;;) {
        if (st)
            return st;
        skip_space(c);
        if (*c->p != '*')
            return AITK_OK;
        c->p++;
        long rhs = 0;
        st = expr_atom(c, &rhs);
        if (!st && __builtin_mul_overflow(*out, rhs, out)) {
            aitk_yaml_errorf(c->err, c->doc, c->node, "overflow in '%s'", c->node->text);
            st = AITK_E_RANGE;
        }
    }
}

static aitk_status expr_sum(expr_ctx *c, long *out)
{
    aitk_status st = expr_product(c, out);
    for (;;) {
        if (st)
            return st;
        skip_space(c);
        char op = *c->p;
        if (op != '+' && op != '-')
            return AITK_OK;
        c->p++;
        long rhs = 0;
        st = expr_product(c, &rhs);
        if (!st && (op == '+' ? __builtin_add_overflow(*out, rhs, out)
                              : __builtin_sub_overflow(*out, rhs, out))) {
            aitk_yaml_errorf(c->err, c->doc, c->node, "overflow in '%s'", c->node->text);
            st = AITK_E_RANGE;
        }
    }
}

aitk_status aitk_model_dim_eval(const aitk_yaml_doc *doc, const aitk_yaml_node *dims,
                                const aitk_yaml_node *expr, long *out, aitk_str *err)
{
    aitk_status st = aitk_yaml_expect(doc, expr, AITK_YAML_SCALAR, "a dimension expression", err);
    if (st)
        return st;
    expr_ctx c = {.doc = doc, .dims = dims, .node = expr, .p = expr->text, .err = err};
    long v = 0;
    st = expr_sum(&c, &v);
    if (st)
        return st;
    skip_space(&c);
    if (*c.p != '\0') {
        aitk_yaml_errorf(err, doc, expr, "unexpected '%s' in '%s'", c.p, expr->text);
        return AITK_E_PARSE;
    }
    if (v < 0) {
        aitk_yaml_errorf(err, doc, expr, "'%s' is negative (%ld)", expr->text, v);
        return AITK_E_RANGE;
    }
    /* Far above any model's width, count or token length (FLUX: 3072 wide,
     * 4096 image tokens), and small enough that the CPU step's int sizes and
     * products of two dimensions stay exact. */
    if (v > AITK_MODEL_DIM_MAX) {
        aitk_yaml_errorf(err, doc, expr, "'%s' is %ld, larger than any model dimension (at most %ld)",
                         expr->text, v, (long)AITK_MODEL_DIM_MAX);
        return AITK_E_RANGE;
    }
    *out = v;
    return AITK_OK;
}

