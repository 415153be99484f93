/* otlp.h - samples as OpenTelemetry profiles: an OTLP
 * ExportProfilesServiceRequest (opentelemetry-proto v1.11.0,
 * opentelemetry/proto/collector/profiles/v1development/profiles_service.proto
 * and profiles/v1development/profiles.proto: the layout of v1.10.0 on,
 * whose Sample numbers its fields stack_index 1, attribute_indices 2,
 * link_index 3, values 4, timestamps_unix_nano 5), protobuf-encoded, the
 * body an OTLP/HTTP receiver takes at /v1development/profiles.
 *
 * The tables are pprof's (lib/output/proftab.h), moved into the request's
 * ProfilesDictionary, each with its zero entry first, and the samples'
 * stacks into its stack_table; one ResourceProfiles (service.name,
 * host.name), one ScopeProfiles (lp and its version), one Profile.  A
 * sample's pid and comm are attributes (process.pid, thread.name), a
 * mapping's build-id too (process.executable.build_id.gnu).
 *
 * One value type a profile (OTLP has no second, as pprof has), so the
 * samples take one of three shapes (the spec's), by what is known:
 *   - every sample has a Unix time and weighs the period (lp-record's
 *     sampling): sample_type samples/count, period_type the event in
 *     nanoseconds, and each sample its timestamps alone, one per sample
 *     summed into it (each counts 1: the OTel eBPF profiler's shape);
 *   - every sample has a Unix time, weights vary (off-CPU time): the
 *     event's type and unit, a value and a timestamp per sample;
 *   - otherwise: the event's type and unit, one value a sample, the sum.
 * A sample's time is its stream time plus its header's
 * realtime_offset_ns= (formats/lp-stream.md). */
#ifndef LP_OTLP_H
#define LP_OTLP_H

#include <stdint.h>
#include <stdio.h>

#include "output/proftab.h"

struct lp_otlp_opts {
	const char *service;	/* the resource's service.name; NULL: none */
	/* The profile's time when its samples carry none: Unix nanoseconds,
	 * [from, until); 0: not known. */
	uint64_t from_unix_ns, until_unix_ns;
};

/* Writes the request (the tables gain the strings it names things
 * with).  0, or -1 when out failed. */
int lp_otlp__write(struct lp_proftab *t, const struct lp_otlp_opts *o, FILE *out);

#endif
