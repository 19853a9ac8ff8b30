/* The registry: every built-in check, in the order of checks/checks.def, the one list of them.
 * Adding a check is adding its file and one line there. */
#include <string.h>

#include <jansson.h>

#include "checks/check.h"

#define CHECK(name) extern const struct check chk_##name;
#include "checks/checks.def"
#undef CHECK

const struct check *const chk_registry[] = {
#define CHECK(name) &chk_##name,
#include "checks/checks.def"
#undef CHECK
};

const size_t chk_registry_len = sizeof(chk_registry) / sizeof(chk_registry[0]);

const struct check *chk_find(const char *id)
{
    for (size_t i = 0; i < chk_registry_len; i++)
        if (!strcmp(chk_registry[i]->id, id))
            return chk_registry[i];
    return NULL;
}

json_t *chk_sources_json(const struct check *ck)
{
    json_t *arr = json_array();

    for (size_t s = 0; arr && ck->sources && ck->sources[s].document; s++) {
        const struct chk_source *src = &ck->sources[s];
        arr = chk_ev_append(arr, json_pack("{s:s,s:s,s:s}", "document", src->document,
                                           "section", src->section, "quote", src->quote));
    }
    return arr;
}

/* The catalogue as JSON, {"checks":[{id, title, severity, rationale, reference, sources:
 * [{document, section, quote}], own, remediation, parameters:[{name, default, min, max, unit,
 * help}]}]}: `vslint checks --format json` and GET /api/v1/checks print the same document. */
json_t *chk_catalogue_json(void)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < chk_registry_len; i++) {
        const struct check *ck = chk_registry[i];
        json_t *params = json_array();
        for (size_t p = 0; ck->params && ck->params[p].name; p++) {
            const struct chk_param *pm = &ck->params[p];
            json_array_append_new(params, json_pack("{s:s,s:f,s:f,s:f,s:s,s:s}", "name",
                                                    pm->name, "default", pm->dflt, "min",
                                                    pm->min, "max", pm->max, "unit",
                                                    pm->unit ? pm->unit : "", "help",
                                                    pm->help ? pm->help : ""));
        }
        json_array_append_new(
            arr, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:o}", "id", ck->id, "title",
                           ck->title, "severity", vsl_severity_name(ck->severity), "rationale",
                           ck->rationale, "reference", ck->reference, "sources",
                           chk_sources_json(ck), "own", ck->own, "remediation",
                           ck->remediation, "parameters", params));
    }
    return arr ? json_pack("{s:o}", "checks", arr) : NULL;
}
