/*
 * numeric.h -- element conversion shared by the library, its tools and the
 * providers.
 *
 * Every data type converts to and from double.  f16 and bf16 round to
 * nearest even and keep inf and NaN; a float stored to an integer type is
 * truncated toward zero, as C's cast (2.7 -> 2, -2.7 -> -2), NaN becomes 0
 * and a value beyond the type's range (an infinity too) its nearest end,
 * so that no value is undefined behaviour (cdnn.h, "Numeric semantics");
 * bool stores 1 for any nonzero value (NaN included).
 *
 * Integer work goes through int64_t instead, which holds every integer
 * type exactly (a double holds i64 only up to 2^53).
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

/** Store v at p as type t (rounded, truncated, saturated as above). */
void cdnn_store_element(cdnn_data_type_t t, void *p, double v);

/** The element at p as an int64_t: integer and bool types exactly; a float
 * type converted as a store to i64 converts it. */
int64_t cdnn_load_element_int(cdnn_data_type_t t, const void *p);

/** Store the integer v at p as type t: an integer type keeps v's low bits
 * (wraps, two's complement), bool stores v != 0, a float type the nearest
 * value (f16 and bf16 through f32). */
void cdnn_store_element_int(cdnn_data_type_t t, void *p, int64_t v);

/** True for f32, f16, bf16 and f64. */
int cdnn_data_type_is_float(cdnn_data_type_t t);

#endif
