package app

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// sameMachine guards against DNS rebinding and cross-site requests: on a
// connection that arrived on a loopback address, the Host header must name
// a loopback host, and an Origin header, when present, must too. Refusals
// are 403 with a fixed message (the offending value is never echoed).
func sameMachine(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if onLoopback(r) && (!loopbackHost(r.Host) || !allowedOrigin(r.Header.Get("Origin"))) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"code":"FORBIDDEN","message":"requests to this loopback server must come from the same machine (Host and Origin)"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// onLoopback reports whether the request came in on a loopback address.
func onLoopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header (host[:port]) names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allowedOrigin accepts no Origin (non-browser clients) or a loopback one.
func allowedOrigin(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackHost(u.Host)
}
