package wire

import "strconv"

// ErrorType is the "type" of an error body: what kind of refusal it is.
// Each has its HTTP status (HTTPStatus).
type ErrorType string

// The error types of the relay's answers.
const (
	TypeInvalidRequest   ErrorType = "invalid_request_error" // 400: the request cannot work as sent (Code and Param say why)
	TypeAuthentication   ErrorType = "authentication_error"  // 401: the token is refused (Code says why)
	TypeUnauthorized     ErrorType = "unauthorized"          // 401: the shared bearer token is missing or wrong
	TypeOriginNotAllowed ErrorType = "origin_not_allowed"    // 403: the page's origin may not call this relay
	TypePermission       ErrorType = "permission_error"      // 403: the token's identity may not do this (Code says why)
	TypeNotFound         ErrorType = "not_found"             // 404: no such route
	TypeStreamGone       ErrorType = "stream_gone"           // 404: the stream expired or never existed here
	TypeMethodNotAllowed ErrorType = "method_not_allowed"    // 405
	TypeStreamExpired    ErrorType = "stream_expired"        // 410: the stream's events are gone from the store
	TypeRateLimit        ErrorType = "rate_limit_exceeded"   // 429: over a limit (Code says which), with Retry-After
	TypeServer           ErrorType = "server_error"          // 500: the relay's own failure; its log has the details
	TypeUpstream         ErrorType = "upstream_error"        // 502: the model's service failed
	TypeShuttingDown     ErrorType = "shutting_down"         // 503: the relay is draining, with Retry-After
	TypeStoreUnavailable ErrorType = "store_unavailable"     // 503: the stream store cannot be reached, with Retry-After
	TypeUnavailable      ErrorType = "unavailable"           // 503: a part of the relay is not there (the widget's files)
	// TypeStatus is the type of a StatusData's error object: not a
	// refusal, the relay's terminal status in an SDK's words.
	TypeStatus ErrorType = "trickle_status"
)

// HTTPStatus is the status a refusal of type t is answered with (500 for
// a type not listed above).
func (t ErrorType) HTTPStatus() int {
	switch t {
	case TypeInvalidRequest:
		return 400
	case TypeAuthentication, TypeUnauthorized:
		return 401
	case TypeOriginNotAllowed, TypePermission:
		return 403
	case TypeNotFound, TypeStreamGone:
		return 404
	case TypeMethodNotAllowed:
		return 405
	case TypeStreamExpired:
		return 410
	case TypeRateLimit:
		return 429
	case TypeUpstream:
		return 502
	case TypeShuttingDown, TypeStoreUnavailable, TypeUnavailable:
		return 503
	}
	return 500
}

// Code names a refusal precisely, within its type: which rule refused the
// request. Each code belongs to one type (Type).
type Code string

// The codes of the relay's refusals.
const (
	// TypeInvalidRequest: the admission policy.
	CodeModelNotAllowed  Code = "model_not_allowed"   // the model is not one the operator allows
	CodeMaxTokensOverCap Code = "max_tokens_over_cap" // max_tokens (or max_completion_tokens) over the operator's cap
	CodeInvalidMaxTokens Code = "invalid_max_tokens"  // max_tokens is not a positive integer
	CodeInputTooLong     Code = "input_too_long"      // the conversation is over the operator's bound
	CodeInvalidJSON      Code = "invalid_json"        // the body is not a JSON object
	CodeInvalidMessages  Code = "invalid_messages"    // "messages" is not an array of objects
	CodeStreamRequired   Code = "stream_required"     // hold-back checks streamed answers only: ask with "stream": true

	// TypeRateLimit: the limits.
	CodeRateLimited          Code = "rate_limited"           // over the identity's request rate
	CodeTooManyStreams       Code = "too_many_streams"       // the identity has its most generations running
	CodeTokenBudgetExhausted Code = "token_budget_exhausted" // the identity's output tokens for the UTC day are spent
	CodeMemoryFull           Code = "memory_full"            // the streams running hold the relay's whole memory for streams
	CodeTooManyConnections   Code = "too_many_connections"   // the client's address has the most connections open

	// TypeAuthentication: why a token is refused.
	CodeTokenMissing      Code = "token_missing"       // no token was sent
	CodeTokenMalformed    Code = "token_malformed"     // not three base64url parts of JSON
	CodeTokenAlgNone      Code = "token_alg_none"      // "alg":"none": unsigned
	CodeTokenAlgorithm    Code = "token_algorithm"     // signed with an algorithm other than HS256
	CodeTokenBadSignature Code = "token_bad_signature" // forged, altered or signed with another secret
	CodeTokenExpired      Code = "token_expired"       // past its exp
	CodeTokenNotYetValid  Code = "token_not_yet_valid" // before its nbf or iat
	CodeTokenNoExpiry     Code = "token_no_expiry"     // no exp claim
	CodeTokenTooLong      Code = "token_too_long"      // exp further ahead than the relay allows
	CodeTokenNoSubject    Code = "token_no_subject"    // no sub claim: no identity to count
	CodeTokenAudience     Code = "token_audience"      // the relay expects an aud (--auth-audience) the token lacks
	CodeTokenIssuer       Code = "token_issuer"        // the relay expects an iss (--auth-issuer) the token does not have

	// TypeOriginNotAllowed: a relay without auth refuses a browser's
	// request under a host name it does not know (DNS rebinding).
	CodeHostNotAllowed Code = "host_not_allowed"

	// TypePermission: with auth on, a stream is its creator's.
	CodeStreamNotOwned Code = "stream_not_owned" // the stream was made by another identity: only it may resume, inspect or stop it
)

// Type is the error type code belongs to (TypeInvalidRequest for a code
// not listed above).
func (c Code) Type() ErrorType {
	switch c {
	case CodeRateLimited, CodeTooManyStreams, CodeTokenBudgetExhausted, CodeMemoryFull, CodeTooManyConnections:
		return TypeRateLimit
	case CodeTokenMissing, CodeTokenMalformed, CodeTokenAlgNone, CodeTokenAlgorithm, CodeTokenBadSignature,
		CodeTokenExpired, CodeTokenNotYetValid, CodeTokenNoExpiry, CodeTokenTooLong, CodeTokenNoSubject,
		CodeTokenAudience, CodeTokenIssuer:
		return TypeAuthentication
	case CodeHostNotAllowed:
		return TypeOriginNotAllowed
	case CodeStreamNotOwned:
		return TypePermission
	}
	return TypeInvalidRequest
}

// Error is a refusal as a client gets it: the error body's type, code,
// the request field it is about and the message, with the HTTP status
// and Retry-After it is answered with. An error that knows its refusal
// says so with Refusal (the Refuser interface).
type Error struct {
	Type       ErrorType
	Code       Code   // may be empty
	Param      string // the request field it is about; may be empty
	Message    string
	Status     int // the HTTP status; 0: Type's (HTTPStatus)
	RetryAfter int // Retry-After in whole seconds; 0: none
}

// Error is the message.
func (e *Error) Error() string { return e.Message }

// Refusal makes *Error a Refuser.
func (e *Error) Refusal() Error { return *e }

// HTTPStatus is the status the refusal is answered with.
func (e Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return e.Type.HTTPStatus()
}

// StreamStatus is the StatusEvent word a streaming client (the WebSocket)
// gets instead of the HTTP status: gone for a stream that is gone, else
// failed.
func (e Error) StreamStatus() Status {
	if e.Type == TypeStreamGone || e.Type == TypeStreamExpired {
		return StatusGone
	}
	return StatusFailed
}

// RetryAfterHeader is the value of the Retry-After header, "" for none.
func (e Error) RetryAfterHeader() string {
	if e.RetryAfter <= 0 {
		return ""
	}
	return strconv.Itoa(e.RetryAfter)
}

// Refuser is an error that knows how the relay refuses a request over it.
// The relay answers with the first Refuser in an error's chain, with the
// whole error's message.
type Refuser interface {
	error
	Refusal() Error
}

// Body is the JSON of an error answer, in the shape of OpenAI's (so that
// its SDKs raise it as theirs), with the request's id.
type Body struct {
	Error BodyError `json:"error"`
}

// BodyError is the error object of a Body.
type BodyError struct {
	Message   string    `json:"message"`
	Type      ErrorType `json:"type"`
	Code      Code      `json:"code,omitempty"`
	Param     string    `json:"param,omitempty"`
	RequestID string    `json:"request_id,omitempty"`
}
