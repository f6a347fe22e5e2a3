/* stack/engine/stage_capture.c: the capture file as a wire stage (see
 * stage_capture.h).  RX: after the emulated wire, before steering; TX:
 * before the emulated wire (stage.h runs tx hooks stack side first). */
#include "stack/engine/stage_capture.h"

#include <errno.h>

#include "nic/capture.h"
#include "stack/base/log.h"
#include "stack/engine/engine_priv.h"

static uint16_t capture_rx(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n,
			   uint16_t max, uint64_t now_ns)
{
	(void)e;
	(void)max;
	(void)now_ns;
	if (n > 0)
		nic_capture_burst(ctx, pkts, n);
	return n;
}

static uint16_t capture_tx(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	(void)e;
	if (n > 0)
		nic_capture_burst(ctx, pkts, n);
	return n;
}

static void capture_destroy(struct us_engine *e, void *ctx)
{
	(void)e;
	nic_capture_close(ctx);
}

static const struct us_stage_ops capture_ops = {
	.name = "capture",
	.place = US_PLACE_CAPTURE,
	.rx = capture_rx,
	.tx = capture_tx,
	.destroy = capture_destroy,
};

/* [capture] pcap = FILE: a start-up error names the key and the reason. */
int us_capture_attach(struct us_engine *e)
{
	struct nic_capture *c;
	char err[256];
	int rc;

	if (e->cfg.capture_pcap[0] == '\0')
		return 0;
	c = nic_capture_open(e->cfg.capture_pcap, e->cfg.capture_snaplen, err, sizeof(err));
	if (c == NULL) {
		rc = errno ? -errno : -EIO;
		US_LOG(stack, ERR, "%s: [capture] pcap = '%s': %s\n", e->cfg.path,
		       e->cfg.capture_pcap, err);
		return rc;
	}
	rc = us_engine_stage_add(e, &capture_ops, c);
	if (rc < 0)
		nic_capture_close(c);
	return rc;
}

const struct nic_capture *us_capture_of(const struct us_engine *e)
{
	return us_engine_stage_ctx(e, &capture_ops);
}
