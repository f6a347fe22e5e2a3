/* nic/capture.h: a libpcap file of every frame an engine receives and sends
 * ([capture] pcap = FILE), written from the engine loop itself, so it works
 * with --no-huge and needs no secondary process (rte_pdump/dpdk-dumpcap is
 * the other way, nic/eal.c).
 *
 * Frames are written as they cross the port: RX right after the burst,
 * before the stack looks at them; TX right before the burst.  A TX frame
 * whose checksums the NIC fills (offload) is captured with them unfilled,
 * as tcpdump shows offloaded packets on Linux.
 *
 * Costs a copy of up to snaplen bytes per frame plus a clock read per burst;
 * stdio buffers the file and it is flushed about once a second and on close.
 */
#ifndef US_NIC_CAPTURE_H
#define US_NIC_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct nic_capture;

/* Types */

#define NIC_CAPTURE_COUNTERS(X) \
	X(frames, "frames written to the capture file") \
	X(truncated, "frames cut to the snaplen") \
	X(write_errors, "frames not captured: write error or unreadable mbuf chain")

struct nic_capture_stats {
#define NIC_CAPTURE_X_FIELD(name, desc) uint64_t name;
	NIC_CAPTURE_COUNTERS(NIC_CAPTURE_X_FIELD)
#undef NIC_CAPTURE_X_FIELD
};

/* Prototypes */

/* Creates (truncates) path as an Ethernet pcap with this snaplen.  NULL with
 * a message in err (and errno) on failure. */
struct nic_capture *nic_capture_open(const char *path, uint32_t snaplen, char *err,
				     size_t errlen);
/* Writes n frames (not consumed, not changed). */
void nic_capture_burst(struct nic_capture *c, struct rte_mbuf *const *pkts, uint16_t n);
const struct nic_capture_stats *nic_capture_stats(const struct nic_capture *c);
/* Flushes and closes; NULL is fine. */
void nic_capture_close(struct nic_capture *c);

#endif
