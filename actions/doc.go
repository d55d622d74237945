// Package actions holds the operator actions, one function per action: each checks its input, runs its
// transaction, writes its audit entry and answers a typed result or a typed error. The JSON admin API
// and the admin pages both call them and render the outcome their own way (a status code and CONTRACT.md's
// error body; a form with its field errors or a flash message), so an action behaves the same whichever
// surface an operator uses.
package actions
