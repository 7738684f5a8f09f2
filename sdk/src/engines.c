#include <cdnn_sdk/engines.h>

#include <string.h>

#include <cdnn_sdk/error.h>

int32_t sdk_engine_count(const sdk_engine_table_t *table)
{
    return table->count;
}

cdnn_status_t sdk_engine_at(const sdk_engine_table_t *table, int32_t index,
                            const sdk_engine_t **engine)
{
    if (index < 0 || index >= table->count)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "no engine number %d", index);
    *engine = &table->engines[index];
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t sdk_engine_info(const sdk_engine_table_t *table, int32_t index,
                              cdnn_provider_engine_t *info)
{
    const sdk_engine_t *e = NULL;
    cdnn_status_t st = sdk_engine_at(table, index, &e);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    info->name = e->name;
    info->rank = e->rank;
    info->payload_major = e->payload_major;
    info->payload_minor = e->payload_minor;
    return CDNN_STATUS_SUCCESS;
}

int32_t sdk_knob_count(const sdk_engine_table_t *table, int32_t index)
{
    return index >= 0 && index < table->count ? table->engines[index].knob_count : 0;
}

cdnn_status_t sdk_knob_info(const sdk_engine_table_t *table, int32_t index,
                            int32_t knob, cdnn_knob_info_t *info)
{
    if (knob < 0 || knob >= sdk_knob_count(table, index))
        return sdk_fail(CDNN_STATUS_NOT_FOUND, "no knob number %d", knob);
    *info = table->engines[index].knobs[knob];
    return CDNN_STATUS_SUCCESS;
}

static const cdnn_knob_info_t *declared_knob(const sdk_engine_t *engine,
                                             const char *name)
{
    for (int32_t i = 0; i < engine->knob_count; i++)
        if (strcmp(engine->knobs[i].name, name) == 0)
            return &engine->knobs[i];
    return NULL;
}

static int given_before(const cdnn_knob_value_t *knobs, int32_t i)
{
    for (int32_t j = 0; j < i; j++)
        if (strcmp(knobs[j].name, knobs[i].name) == 0)
            return 1;
    return 0;
}

cdnn_status_t sdk_check_payload_knobs(const sdk_engine_t *engine,
                                      const cdnn_knob_value_t *knobs, int32_t count)
{
    for (int32_t i = 0; i < count; i++) {
        const cdnn_knob_value_t *k = &knobs[i];
        if (given_before(knobs, i))
            return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is inconsistent: "
                            "knob %s is given twice", k->name);
        if (strncmp(k->name, "global.", 7) == 0)
            return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is inconsistent: it "
                            "holds the global knob %s, which steers builds and is "
                            "never saved in a payload", k->name);
        const cdnn_knob_info_t *declared = declared_knob(engine, k->name);
        if (!declared)
            return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is inconsistent: "
                            "engine %s has no knob %s", engine->name, k->name);
        if (k->value < declared->min_value || k->value > declared->max_value)
            return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is inconsistent: "
                            "knob %s=%lld is outside [%lld, %lld]", k->name,
                            (long long)k->value, (long long)declared->min_value,
                            (long long)declared->max_value);
    }
    return CDNN_STATUS_SUCCESS;
}
