/* stack/base/log.c: userstack's rte_log types and [log] levels (see log.h). */
#include <errno.h>
#include <string.h>

#include <rte_log.h>

#include "stack/base/log.h"

RTE_LOG_REGISTER(us_logtype, userstack, NOTICE);
RTE_LOG_REGISTER(us_logtype_nic, userstack.nic, NOTICE);
RTE_LOG_REGISTER(us_logtype_stack, userstack.stack, NOTICE);

int us_log_level_parse(const char *s)
{
	static const char *const names[] = { "emergency", "alert", "critical", "error",
					     "warning", "notice", "info", "debug" };

	for (int i = 0; i < 8; i++) {
		/* RTE_LOG_EMERG is 1 ... RTE_LOG_DEBUG is 8. */
		if (strcmp(s, names[i]) == 0)
			return i + 1;
	}
	if (s[0] >= '1' && s[0] <= '8' && s[1] == '\0')
		return s[0] - '0';
	return -EINVAL;
}

/* Per-room key, or the section's level when the key is not given. */
static int log_room_level(const struct us_log_config *lc, const char *room)
{
	return us_log_level_parse(room[0] != '\0' ? room : lc->level);
}

int us_log_apply(const struct us_log_config *lc)
{
	int all = us_log_level_parse(lc->level);
	int nic = log_room_level(lc, lc->nic);
	int stack = log_room_level(lc, lc->stack);

	if (all < 0 || nic < 0 || stack < 0)
		return -EINVAL;
	rte_log_set_level(us_logtype, (uint32_t)all);
	rte_log_set_level(us_logtype_nic, (uint32_t)nic);
	rte_log_set_level(us_logtype_stack, (uint32_t)stack);
	return 0;
}

void us_log_raise_global(const struct us_log_config *lc)
{
	int most = us_log_level_parse(lc->level);
	int nic = log_room_level(lc, lc->nic);
	int stack = log_room_level(lc, lc->stack);

	if (nic > most)
		most = nic;
	if (stack > most)
		most = stack;
	if (most > 0 && (uint32_t)most > rte_log_get_global_level())
		rte_log_set_global_level((uint32_t)most);
}
