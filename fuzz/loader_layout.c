/*
 * fuzz/loader_layout.c -- prints the dump format's layout (sizes and
 * offsets, as the compiler lays the structs out) for fuzz/make_corpus.py.
 * Built by fuzz/make-loader-corpus.sh against the server's headers; never
 * part of the extension.
 */
#include "postgres.h"

#include <stdio.h>

#include "persist_internal.h"

int
main(void)
{
	printf("format %d\n", NG_DUMP_FORMAT);
	printf("header_size %zu\n", sizeof(NgDumpHeader));
	printf("header_format %zu\n", offsetof(NgDumpHeader, format));
	printf("header_contrib_size %zu\n", offsetof(NgDumpHeader, contrib_size));
	printf("header_contrib_crc %zu\n", offsetof(NgDumpHeader, contrib_crc));
	printf("header_nentries %zu\n", offsetof(NgDumpHeader, nentries));
	printf("entry_size %zu\n", sizeof(NgDumpEntry));
	printf("entry_text_len %zu\n", offsetof(NgDumpEntry, text_len));
	printf("entry_hist_mask %zu\n", offsetof(NgDumpEntry, hist_mask));
	printf("group_bytes %zu\n", (size_t) NG_HIST_GROUP_BYTES);
	printf("errors_head_size %zu\n", sizeof(NgDumpErrorsHead));
	printf("errors_head_nerrors %zu\n", offsetof(NgDumpErrorsHead, nerrors));
	printf("errors_size %zu\n", sizeof(NgDumpErrors));
	printf("plans_head_size %zu\n", sizeof(NgDumpPlansHead));
	printf("plans_head_nplans %zu\n", offsetof(NgDumpPlansHead, nplans));
	printf("plan_size %zu\n", sizeof(NgDumpPlan));
	printf("plan_planid %zu\n", offsetof(NgDumpPlan, planid));
	printf("plan_text_len %zu\n", offsetof(NgDumpPlan, text_len));
	return 0;
}
