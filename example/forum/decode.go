package forum

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// decode reads a request's JSON body into v, strictly: the body must be
// sent as application/json (415), fit in DefaultBodyLimit (413), be valid
// UTF-8, hold exactly one JSON value and nothing after it, and name no
// field v lacks (400). Every handler with a body reads it here.
func decode(c echo.Context, v any) error {
	r := c.Request()
	if err := requireJSON(r); err != nil {
		return err
	}
	if r.Body == nil {
		return badRequest("a JSON body is required")
	}
	// Protect's BodyLimit normally stops a large body first; this bound
	// holds where the forum is mounted without it.
	body, err := io.ReadAll(io.LimitReader(r.Body, DefaultBodyLimit+1))
	if err != nil {
		return readError(err)
	}
	if len(body) > DefaultBodyLimit {
		return echo.ErrStatusRequestEntityTooLarge
	}
	// encoding/json would turn invalid bytes into U+FFFD silently.
	if !utf8.Valid(body) {
		return badRequest("the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return badRequest("a JSON body is required")
		}
		return badRequest("invalid JSON body: " + err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("invalid JSON body: data after the JSON value")
	}
	return nil
}

// readError turns a failed body read into its answer: 413 over the limit,
// 408 when the client was too slow for the server's read timeout, 400 for
// a body cut short.
func readError(err error) error {
	var he *echo.HTTPError
	var tooLarge *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &tooLarge):
		return echo.ErrStatusRequestEntityTooLarge
	case errors.As(err, &ne) && ne.Timeout():
		return echo.NewHTTPError(http.StatusRequestTimeout, "the body was not sent in time")
	}
	return badRequest("the body could not be read")
}

// text checks one user-supplied string: trimmed, present, within limit
// characters, and free of control characters and of the bidirectional
// overrides that make text read differently from what it is. multiline
// allows line breaks and tabs (reply texts).
func text(field, s string, limit int, multiline bool) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", badRequest(field + " is required")
	case !utf8.ValidString(s):
		return "", badRequest(field + " is not valid UTF-8")
	case utf8.RuneCountInString(s) > limit:
		return "", badRequest(field + " is longer than " + strconv.Itoa(limit) + " characters")
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\r' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			return "", badRequest(field + " contains a control character (" + strconv.QuoteRune(r) + ")")
		}
	}
	return s, nil
}
