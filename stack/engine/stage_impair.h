/* stack/engine/stage_impair.h: [impair] rx / tx, the link emulator
 * (nic/impair.h) in place on the engine's own port, as two wire stages
 * (stage.h). */
#ifndef US_STAGE_IMPAIR_H
#define US_STAGE_IMPAIR_H

#include <stdbool.h>

struct nic_impair;
struct us_engine;

/* Prototypes */

/* The stages e's config asks for (none when its specs are empty); 0 or
 * -EINVAL (bad spec, logged with the key) / -ENOMEM / -ENOSPC. */
int us_impair_attach(struct us_engine *e);
/* e's TX (tx true) or RX emulator, NULL when off (telemetry's counters). */
const struct nic_impair *us_impair_of(const struct us_engine *e, bool tx);

#endif
