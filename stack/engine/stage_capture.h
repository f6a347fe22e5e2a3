/* stack/engine/stage_capture.h: [capture] pcap, every frame the engine
 * receives and sends written to a file (nic/capture.h), as a wire stage
 * (stage.h) inside the emulated wire: the file shows what the stack saw
 * and what it sent. */
#ifndef US_STAGE_CAPTURE_H
#define US_STAGE_CAPTURE_H

struct nic_capture;
struct us_engine;

/* Prototypes */

/* The capture file e's config names (nothing without one): 0, or -errno
 * with the key and the reason logged. */
int us_capture_attach(struct us_engine *e);
/* e's capture, NULL when off (telemetry's counters). */
const struct nic_capture *us_capture_of(const struct us_engine *e);

#endif
