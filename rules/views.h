/* The public schema: read-only views of the inventory with stable names and documented columns
 * (docs/schema.md), the one interface site rules, `vslint query` and `vslint export` read. */
#ifndef RULES_VIEWS_H
#define RULES_VIEWS_H

#include <stddef.h>

#include <sqlite3.h>

/* vsl_schema_info's version: a removed or renamed column is a new version, announced in
 * docs/schema.md; an added column is not. */
#define RULES_SCHEMA_VERSION 1

/* The public views' names, in the order docs/schema.md and `vslint export` list them. */
extern const char *const rules_views[];
extern const size_t rules_nviews;

/* Creates the public views on h as TEMP views (the database file never holds them, so a
 * read-only connection of a user who may not write the file gets them too): each vsl_NAME reads
 * an inner view named inner + NAME, which alone reads the stored tables, so an authorizer can
 * tell a read through the views (its inner view name starts with inner) from any other. inner
 * starts with "vsl_". vcenter (NULL: all) restricts every view to one vCenter's rows (bound,
 * never formatted into SQL). 0, or -EINVAL with the cause in err. */
int rules_views_create(sqlite3 *h, const char *inner, const char *vcenter, char *err,
                       size_t errlen);

#endif
