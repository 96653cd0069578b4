#include "base/err.h"

const char *cadre_strerror(int err)
{
	switch (err) {
	case CADRE_OK: return "success";
	case CADRE_ENOMEM: return "out of memory";
	case CADRE_EINVAL: return "invalid argument";
	case CADRE_EPARSE: return "parse error";
	case CADRE_ENOTFOUND: return "not found";
	case CADRE_ECONFLICT: return "conflict";
	case CADRE_EEXIST: return "already exists";
	case CADRE_EGONE: return "gone";
	case CADRE_EAGAIN: return "try again";
	case CADRE_ETOOMANY: return "too many requests";
	case CADRE_EUNAUTHORIZED: return "unauthorized";
	case CADRE_EFORBIDDEN: return "forbidden";
	case CADRE_EREJECTED: return "invalid object";
	case CADRE_ETIMEDOUT: return "timed out";
	case CADRE_EIO: return "i/o error";
	case CADRE_ESERVER: return "server error";
	case CADRE_ETOOBIG: return "too big";
	case CADRE_ECANCELED: return "canceled";
	case CADRE_EHTTP: return "http error";
	case CADRE_ETERMINATING: return "namespace being deleted";
	}
	return "unknown error";
}
