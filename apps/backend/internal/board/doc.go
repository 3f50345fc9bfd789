// Package board serves the operator's web board: the embedded page and its
// ES modules, sign-in with the operator token into a revocable HttpOnly
// session cookie, sign-out, and the security headers of every response.
// The page itself talks to the backend only through the WebSocket API
// (/ws), so every form goes through the same actions, and the same
// validation, as every other transport.
//
// It imports only the standard library. It must not import the action
// registry, the store or the WebSocket server: the application gives it a
// function that recognises the operator token, and asks it whether a
// request carries a live board session.
package board
