/*
 * dash_ws.c - a WebSocket message from the dashboard's page
 * (dash_ws_message in cli/dashboard/dash_route.c): any bytes, as a page or a tool
 * connected with the cookie may send.
 *
 * Properties: a watch is a key that fits the connection's buffer, ends,
 * and is the string the message held; anything that is not such a message
 * changes nothing.
 */
#include "fuzz/fuzz.h"

#include "cli/dashboard/dash.h"

#include <jansson.h>
#include <string.h>

int fuzz_dash_ws(const uint8_t *data, size_t size)
{
	char watch[320];
	json_t *msg;
	const char *key;
	enum dash_ws_kind kind;

	memset(watch, 'x', sizeof(watch));
	kind = dash_ws_message((const char *)data, size, watch, sizeof(watch));
	msg = json_loadb((const char *)data, size, 0, NULL);
	key = json_string_value(json_object_get(msg, "watch"));
	switch (kind) {
	case DASH_WS_WATCH:
		FUZZ_CHECK(memchr(watch, '\0', sizeof(watch)), "the key does not end");
		FUZZ_CHECK(key && !strcmp(key, watch), "watch \"%s\", the message held another",
			   watch);
		break;
	case DASH_WS_UNWATCH:
		FUZZ_CHECK(json_object_get(msg, "watch"), "unwatch without a watch field");
		FUZZ_CHECK(watch[0] == 'x' && watch[sizeof(watch) - 1] == 'x', "unwatch wrote a key");
		break;
	case DASH_WS_IGNORE:
		FUZZ_CHECK(!json_object_get(msg, "watch"), "a watch field ignored");
		FUZZ_CHECK(watch[0] == 'x' && watch[sizeof(watch) - 1] == 'x', "ignore wrote a key");
		break;
	}
	json_decref(msg);
	return 0;
}
