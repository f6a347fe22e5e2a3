/* tests/fuzz/fuzz_config.c: us_config_parse_string (config/) on any text.
 *
 * Whatever the text, the parser must either accept it with values inside
 * their documented ranges or reject it with a one-line message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct us_config cfg;
	char err[512];
	char *text = malloc(size + 1);
	int rc;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	rc = us_config_parse_string("fuzz.ini", text, &cfg, err, sizeof(err));
	if (rc != 0 && rc != -1) {
		fprintf(stderr, "fuzz_config: returned %d\n", rc);
		abort();
	}
	if (rc < 0 && (err[0] == '\0' || strchr(err, '\n') != NULL)) {
		fprintf(stderr, "fuzz_config: rejected without a one-line message: '%s'\n", err);
		abort();
	}
	if (rc == 0 && (cfg.prefixlen > 32 || cfg.nroutes > US_CFG_MAX_ROUTES ||
			memchr(cfg.nic.device, '\0', sizeof(cfg.nic.device)) == NULL)) {
		fprintf(stderr, "fuzz_config: accepted with values out of range\n");
		abort();
	}
	free(text);
	return 0;
}
