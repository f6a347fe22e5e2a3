/* stack/base/log.h: userstack's rte_log types and their levels from [log].
 *
 * Types: "userstack" (the API and apps), "userstack.nic", "userstack.stack",
 * registered with rte_log_register_type_and_pick_level before main (so
 * `--log-level=userstack.nic:debug` in [eal] extra_args works too).  Their
 * levels come from [log] level (every userstack* type) and the per-room keys
 * nic = ... / stack = ....  EAL's global level ([eal] log_level) caps every
 * type, so us_log_raise_global() lifts it when [log] asks for more.
 *
 * Messages go wherever EAL sends its own (stderr and syslog on Linux).  Fatal
 * start-up errors before EAL is up stay plain fprintf(stderr) lines.
 *
 * This lives in the leaf because every room that logs (nic/, the stack)
 * links it; config/ fills struct us_log_config and tcp/ does not log (it
 * counts).
 */
#ifndef US_BASE_LOG_H
#define US_BASE_LOG_H

#include <rte_log.h>

/* Types */

#define US_LOG_LEVEL_STR 32

/* [log]: level names as us_log_level_parse takes them. */
struct us_log_config {
	char level[US_LOG_LEVEL_STR]; /* level = ..., every userstack* type, default notice */
	char nic[US_LOG_LEVEL_STR];   /* nic = ...: userstack.nic, "" = level */
	char stack[US_LOG_LEVEL_STR]; /* stack = ...: userstack.stack, "" = level */
};

extern int us_logtype;
extern int us_logtype_nic;
extern int us_logtype_stack;

/* US_LOG(nic, WARNING, "port %u: ...\n", id): level names as RTE_LOG_*. */
#define US_LOG(room, lvl, ...) \
	rte_log(RTE_LOG_##lvl, us_logtype_##room, "userstack: " __VA_ARGS__)

/* Prototypes */

/* "emergency".."debug" or "1".."8" -> RTE_LOG_EMERG..RTE_LOG_DEBUG; -EINVAL. */
int us_log_level_parse(const char *s);
/* Sets the userstack types' levels from [log]; 0 or -EINVAL. */
int us_log_apply(const struct us_log_config *lc);
/* After rte_eal_init: raise EAL's global level to the most verbose [log]
 * level if that is above it (else our debug lines would be cut by it). */
void us_log_raise_global(const struct us_log_config *lc);

#endif
