/*
 * numeric.h -- element conversion shared by the library, its tools and the
 * providers.
 *
 * Every data type converts to and from double.  f16 and bf16 round to
 * nearest even and keep inf and NaN; integer stores round half away from
 * zero and saturate, so that a value outside the type's range never
 * becomes undefined behaviour; bool stores 1 for any nonzero value.
 */
#ifndef CDNN_SDK_NUMERIC_H
#define CDNN_SDK_NUMERIC_H

#include <stdint.h>

#include <cdnn/cdnn.h>

float cdnn_half_to_float(uint16_t h);
uint16_t cdnn_float_to_half(float f);
float cdnn_bf16_to_float(uint16_t b);
uint16_t cdnn_float_to_bf16(float f);

/** The element at p, of type t, as a double. */
double cdnn_load_element(cdnn_data_type_t t, const void *p);

/** Store v at p as type t (rounded, saturated as above). */
void cdnn_store_element(cdnn_data_type_t t, void *p, double v);

/** True for f32, f16, bf16 and f64. */
int cdnn_data_type_is_float(cdnn_data_type_t t);

#endif
