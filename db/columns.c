/* The column lists of db/columns.h as data: one array of columns per table, and the values the
 * store derives for its FN columns. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/columns.h"
#include "model/estate.h"
#include "model/inventory.h"

#define SRC_TEXT(S, f) .off = offsetof(struct S, f)
#define SRC_INT        SRC_TEXT
#define SRC_I64        SRC_TEXT
#define SRC_BOOL       SRC_TEXT
#define SRC_FN(S, f)   .fn = f
#define SRC_RAW(S, f)  .decl = f
#define EST_EST(E, c)  offsetof(struct E, c)
#define EST_NOEST(E, c) -1
#define NN             DB_NN
#define PK             DB_PK
#define KEY            (DB_NN | DB_PK)
#define HIDDEN         DB_HIDDEN
#define EMPTY_NULL     DB_EMPTY_NULL

/* What the C type of a field must be for a column of each type: a field of another type is a
 * compile error, in the row struct and in the estate struct alike. */
#define CTYPE_TEXT(x) _Generic((x), const char *: 1, default: 0)
#define CTYPE_INT(x)  _Generic((x), int: 1, default: 0)
#define CTYPE_BOOL    CTYPE_INT
#define CTYPE_I64(x)  _Generic((x), int64_t: 1, default: 0)
#define CTYPE_FN(x)   1
#define CTYPE_RAW(x)  1
#define FIELD_TEXT(S, f) (((struct S *)0)->f)
#define FIELD_INT        FIELD_TEXT
#define FIELD_I64        FIELD_TEXT
#define FIELD_BOOL       FIELD_TEXT
#define FIELD_FN(S, f)   0
#define FIELD_RAW(S, f)  0
#define ESTF_EST(E, c)   (((struct E *)0)->c)
#define ESTF_NOEST(E, c) 0
#define ESTT_EST(t, x)   CTYPE_##t(x)
#define ESTT_NOEST(t, x) 1

#define COLUMN(S, E, col, src, t, fl, sn, est)                                                     \
    {.name = #col,                                                                                 \
     .type = DB_##t,                                                                               \
     .flags = (fl),                                                                                \
     .since = (sn),                                                                                \
     SRC_##t(S, src),                                                                              \
     .est_off = EST_##est(E, col)},
#define TYPECHECK(S, E, col, src, t, fl, sn, est)                                                  \
    _Static_assert(CTYPE_##t(FIELD_##t(S, src)), #S "." #src ": not a " #t " field");              \
    _Static_assert(ESTT_##est(t, ESTF_##est(E, col)), #E "." #col ": not a " #t " field");

#define INVENTORY_COLUMNS(ENUM, table, sink, est, sn, rowid)                                       \
    static const struct db_column table##_cols[] = {DB_COLS_##table(COLUMN, vim_##sink, est)};     \
    DB_COLS_##table(TYPECHECK, vim_##sink, est)
#define OWN_COLUMNS(ENUM, table, sn)                                                               \
    static const struct db_column table##_cols[] = {DB_COLS_##table(COLUMN, _, _)};
DB_INVENTORY_TABLES(INVENTORY_COLUMNS)
DB_OWN_TABLES(OWN_COLUMNS)

#define NCOLS(a)         ((int)(sizeof(a) / sizeof((a)[0])))
#define ROWID_ROWID      0
#define ROWID_WITHOUT_ROWID 1
#define INVENTORY_TABLE(ENUM, table, sink, est, sn, rowid)                                         \
    {#table, sn, 1, ROWID_##rowid, table##_cols, NCOLS(table##_cols)},
#define OWN_TABLE(ENUM, table, sn) {#table, sn, 0, 0, table##_cols, NCOLS(table##_cols)},

const struct db_table_def db_tables[] = {DB_INVENTORY_TABLES(INVENTORY_TABLE)
                                             DB_OWN_TABLES(OWN_TABLE)};
const int db_ntables = NCOLS(db_tables);

#define INDEX(name, sn, on) {#name, sn, on},
const struct db_index_def db_indexes[] = {DB_INDEXES(INDEX)};
const int db_nindexes = NCOLS(db_indexes);

/* ---- derived values ----------------------------------------------------------------------- */

/* A target's key, the "address:port" string iscsi_options names it by. An address too long for
 * it is not a real one: NULL, and the row is skipped like any row without a key. */
const char *db_target_key(const void *row, char *buf, size_t size)
{
    const struct vim_iscsi_target *t = row;
    int n;

    if (!t->address)
        return NULL;
    if (t->port == VIM_UNKNOWN)
        n = snprintf(buf, size, "%s", t->address);
    else
        n = snprintf(buf, size, "%s:%d", t->address, t->port);
    return n >= 0 && (size_t)n < size ? buf : NULL;
}

/* A send target has no IQN: '' keeps the key free of NULLs. */
const char *db_target_iqn(const void *row, char *buf, size_t size)
{
    const struct vim_iscsi_target *t = row;

    return t->iscsi_name ? t->iscsi_name : "";
}

/* An adapter's own option (no target) stores '' for the target's kind, key and IQN; so does a
 * send target's for the IQN. */
const char *db_option_kind(const void *row, char *buf, size_t size)
{
    const struct vim_iscsi_option *o = row;

    return o->target ? o->kind : "";
}

const char *db_option_target(const void *row, char *buf, size_t size)
{
    const struct vim_iscsi_option *o = row;

    return o->target ? o->target : "";
}

const char *db_option_iqn(const void *row, char *buf, size_t size)
{
    const struct vim_iscsi_option *o = row;

    return o->target && o->target_iqn ? o->target_iqn : "";
}

/* A gap about no particular object is about the vCenter itself: object ''. */
const char *db_gap_object(const void *row, char *buf, size_t size)
{
    const struct vim_gap *g = row;

    return g->object ? g->object : "";
}
