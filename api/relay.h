/* The relays (api/relay.c): each carries one client connection's requests to libmicrohttpd over
 * a socketpair and its answers back, checking every request head on the way in. */
#ifndef API_RELAY_H
#define API_RELAY_H

#include <gnutls/gnutls.h>
#include <stddef.h>
#include <stdint.h>

struct api_door;
struct api_hold;

/* The relays and the thread that runs them. */
struct api_relays;
/* max: at most this many at once; head_s: a request begun must arrive whole within this long
 * (header_timeout), or the connection is answered 408 and closed; idle_s: a relay where nothing
 * moved for this long is closed. Each relay holds its client's place in the door's counts and
 * gives it back when it ends. */
int api_relays_new(struct api_door *door, unsigned max, int head_s, int idle_s,
                   struct api_relays **out);
/* Relays between the client (on client_fd; over HTTPS through session s, NULL for plain HTTP)
 * and libmicrohttpd (app_fd, the other end handed over with MHD_add_connection()); in holds the
 * len bytes read so far (HTTPS: the first head, decrypted; plain HTTP: none, the head waits in
 * the socket). Takes s, client_fd and app_fd in every case; 0 or a negative error (everything
 * closed and the count given back). h is the relay's hold of the client's place in the counts
 * (api_door_relay_done() when it ends), who the client's address for the log. */
int api_relay_add(struct api_relays *rs, gnutls_session_t s, int client_fd, int app_fd,
                  struct api_hold *h, const char *who, const char *in, size_t len);
/* Waits until no relay owes its client bytes of an answer (asked and not yet sent on), up to
 * until_ms (CLOCK_MONOTONIC milliseconds): 0, or -ETIMEDOUT. Relays keep running meanwhile;
 * for a stop, after the door stopped accepting. NULL: 0. */
int api_relays_drain(struct api_relays *rs, int64_t until_ms);
/* Stops the thread and closes every relay; NULL is a no-op. */
void api_relays_free(struct api_relays *rs);

#endif
