/* tcp/tcp_config.c: tcp/'s configuration defaults and the names of its
 * choices (see tcp_config.h).  Pure: no EAL, no mbufs. */
#include "tcp/tcp_config.h"

const char *const tcp_cc_names[TCP_CC_ALG_COUNT] = {
	[TCP_CC_CUBIC] = "cubic",
	[TCP_CC_NEWRENO] = "newreno",
};

const char *const tcp_syncookies_names[TCP_SYNCOOKIES_MODE_COUNT] = {
	[TCP_SYNCOOKIES_AUTO] = "auto",
	[TCP_SYNCOOKIES_ALWAYS] = "always",
	[TCP_SYNCOOKIES_OFF] = "off",
};

const char *const tcp_rec_alg_names[TCP_REC_ALG_COUNT] = {
	[TCP_REC_PRR] = "prr",
	[TCP_REC_PRR_CRB] = "prr-crb",
	[TCP_REC_PRR_SSRB] = "prr-ssrb",
	[TCP_REC_RFC6675] = "rfc6675",
	[TCP_REC_RATEHALVING] = "ratehalving",
};

const char *const tcp_loss_det_names[TCP_LOSS_DET_COUNT] = {
	[TCP_LOSS_DUPACK] = "dupack",
	[TCP_LOSS_RACK] = "rack",
};

const char *const tcp_profile_names[TCP_PROFILE_COUNT] = {
	[TCP_PROFILE_LINUX] = "linux",
	[TCP_PROFILE_RFC] = "rfc",
};

void tcp_config_defaults(struct tcp_config *cfg)
{
	*cfg = (struct tcp_config){
		.rto_min_ms = 200, .rto_initial_ms = 1000, .rto_max_ms = 120000,
		.time_wait_ms = 60000, .delack_ms = 40, .syn_retries = 7,
		.synack_retries = 5,
		.data_retries = 15, .rcvbuf = 256 * 1024, .sndbuf = 256 * 1024,
		.rcvbuf_max = TCP_RCVBUF_MAX_DEFAULT,
		.max_conns = 65536, .backlog = 1024,
		.wscale = true, .sack = true, .timestamps = true,
		.nodelay_default = false, .sws_override_ms = 200,
		.syncookies = TCP_SYNCOOKIES_AUTO, .challenge_ack_limit = 1000, .challenge_ack_jitter = true,
		.rst_closed_limit = 1000,
		.min_pmtu = 552,
		.keepalive_idle_ms = 7200000, .keepalive_intvl_ms = 75000,
		.keepalive_probes = 9, .cc = TCP_CC_CUBIC, .recovery = TCP_REC_PRR,
		.tlp = true,
		.undo = true,
		.loss_detection = TCP_LOSS_RACK,
		.profile = TCP_PROFILE_LINUX,
		.fastopen = 0, .fastopen_qlen = 16, .fastopen_rotate_s = 3600,
	};
}

const char *tcp_cc_name(enum tcp_cc_alg alg)
{
	return (unsigned)alg < TCP_CC_ALG_COUNT ? tcp_cc_names[alg] : "?";
}

const char *tcp_rec_alg_name(enum tcp_rec_alg alg)
{
	return (unsigned)alg < TCP_REC_ALG_COUNT ? tcp_rec_alg_names[alg] : "?";
}
