/* reportpage.h - lp-report's page: lib/output/report.html, built into the
 * program, with the report's data put in.  The template draws everything
 * from one JSON object (what it holds: lib/analysis/report.c); nothing is fetched. */
#ifndef LP_REPORTPAGE_H
#define LP_REPORTPAGE_H

#include <stddef.h>
#include <stdio.h>

/* Writes the page with json[0..len) as its data.  Every "<" of the JSON
 * is written \u003c (the same string to JSON), so no value can end or
 * upset the script element it sits in.  0, or -1 when the write failed. */
int lp_report_page__write(FILE *out, const char *json, size_t len);

#endif
