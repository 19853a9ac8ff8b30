/* The stored inventory as text for `vslint inventory`. */
#ifndef VSL_INVENTORY_TEXT_H
#define VSL_INVENTORY_TEXT_H

#include <jansson.h>
#include <stdio.h>

/* Writes a human-readable rendering of an inventory document (from db_inventory_json) to f.
 * -EINVAL when inv is not one; the stream's error when writing fails. */
int vsl_inventory_text(const json_t *inv, FILE *f);

#endif
