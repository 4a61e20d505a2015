// Package listenq tells whether a listener has connections waiting to be
// accepted, so that whoever closes a command's listener when the command
// ends can accept (and serve) what the command connected just before it
// ended, without waiting when nothing is queued.
package listenq
