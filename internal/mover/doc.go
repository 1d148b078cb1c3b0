// Package mover moves messages from one queue to another over AMQP 0-9-1 (amqp091-go), and
// purges a queue. A move keeps each message's order, body, properties and headers (a property
// left at its zero value, such as priority 0, is not written, and comes back absent: a classic
// queue reads both the same); it publishes under publisher confirms, mandatory, and acknowledges a
// message on the source only after the positive confirm of its copy and only when no return came.
// Any failure stops it, leaving every message not confirmed on the source (at worst a message is
// on the destination twice, never lost). The decisions are a pure core (core.go) that the AMQP loop
// (move.go) feeds.
//
// A connection is opened per operation and closed after it; its URL carries no credentials (they
// go as SASL PLAIN, from Config.Credentials) and no vhost (the operation's). Errors are typed: a
// kind (errors.go) and a Cause saying what went wrong, which the caller words; nothing here knows
// the caller's settings. The package imports no other package of this module.
package mover
