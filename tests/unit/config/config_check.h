/* tests/unit/config/config_check.h: the config tests' two checks (include
 * after cmocka.h).  Rejections are checked by a part of the message (file,
 * section, key, value, why), so each test names what it must say. */
#ifndef US_TEST_CONFIG_CHECK_H
#define US_TEST_CONFIG_CHECK_H

#include <string.h>

#include "config/config.h"

/* Prototypes */

/* text parses (as file t.ini) into cfg, or the test fails with the error. */
static inline void cfg_load_ok(const char *text, struct us_config *cfg)
{
	char err[1024] = "";

	if (us_config_parse_string("t.ini", text, cfg, err, sizeof(err)) != 0)
		fail_msg("unexpected error: %s", err);
}

/* text is refused with an error that contains want. */
static inline void cfg_expect_reject(const char *text, const char *want)
{
	struct us_config cfg;
	char err[1024] = "";

	assert_int_equal(us_config_parse_string("t.ini", text, &cfg, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' does not contain '%s'", err, want);
}

#endif
