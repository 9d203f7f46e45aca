// Package jsonstore is an EWP evidence store (EWP.md §9) kept as a
// directory of JSON files. It applies exactly the snapshot and record
// identity rules of the SQLite ledger, because both ask package snapshot
// for every decision; it exists to show that those rules are independent of
// the storage substrate, and it is a store a person can read with ls and
// a text editor.
//
// # Layout
//
//	DIR/.ewp-jsonstore                    format marker {"format":"ewp-jsonstore","version":1}
//	DIR/.lock                             the lock file (flock)
//	DIR/.journal                          only while a batch commits, or after a crash
//	DIR/.staging/<batch>/                 the files of a batch being written
//	DIR/<prop>/index.json                 the proposition's index
//	DIR/<prop>/<seq>-<view>.json          one snapshot: warrant.Encode(v), byte for byte
//
// <prop> and <view> are the ids escaped for file names: the bytes a-z, 0-9,
// "-" and "_" stay, every other byte becomes %XX, and a name longer than
// 120 bytes becomes a prefix of at most 80 bytes, "~" and 128 bits of the id's
// sha256. So any id (any Unicode, "/", "..", upper and lower case on a
// case-insensitive file system, kilobytes long) gets its own safe name,
// and no id can name a store file (those start with "."). <seq> numbers a
// proposition's snapshots from 1; the highest is "latest".
//
// index.json lists the snapshots (seq, view id, file, sha256 of the file),
// the first stored fingerprint of every record id (snapshot.Fingerprint:
// kind, id, sum, the view that stored it) and the assertion texts of the
// latest snapshot, for List. Ids that are not valid UTF-8 (the kernel
// keeps lone surrogates) are written as {"base64": ...} so they survive.
// A write rewrites the index of every proposition it touches, and List
// reads every index: costs grow with a proposition's history and with the
// number of propositions, which suits thousands of snapshots, not the
// millions the ledger is built for.
//
// # Locking
//
// Every operation holds a flock(2) on DIR/.lock: shared to read, exclusive
// to write. Within a process, goroutines queue on a mutex first. Readers
// therefore never see half a batch, and an append reads "latest" and
// stores latest+record under one exclusive lock, so concurrent appends
// from any number of goroutines and processes never lose each other. A
// wait for the lock ends with the context or after Options.LockTimeout.
// flock is advisory and local: do not share a store over NFS.
//
// # Batches and crashes
//
// Put stores a batch all or nothing. Every rule is decided in memory first
// (a refusal writes nothing); then the batch commits in four steps:
//
//  1. stage: the new snapshot files and changed index files are written
//     into .staging/<batch>/ and fsynced, with the directory;
//  2. commit: .journal, listing every rename, is written atomically (temp
//     file in DIR, fsync, rename, fsync DIR). This is the commit point;
//  3. apply: each staged file is renamed into place, bodies before indexes
//     (a rename within one file system is atomic and replaces an old
//     index whole), and the changed directories are fsynced;
//  4. finish: .journal is removed (fsync DIR), then the staging directory.
//
// A writer that dies before step 2 leaves staged files no index names; one
// that dies after it leaves the journal. The next operation that takes the
// lock recovers before anything else: it replays a journal (renames whose
// source is gone already happened, so replay is idempotent) or deletes
// what is staged. A reader that finds a journal lets a writable store
// recover first; a read-only store reports it. So after any crash each
// batch is wholly present or wholly absent. A storage error after the
// commit point is reported, but the batch is committed and the next
// operation completes it.
//
// # Rules
//
// The same as the ledger's, through package snapshot: an identical re-put
// is a no-op (snapshot.CheckSnapshot against the indexed sum), a different
// snapshot under an existing view id and a record id reused with other
// content are refused with warrant.CodeImmutableRecord (snapshot.Check
// against the index), appends are snapshot.Append under the lock, and
// attestation of trusted origins is the caller's duty. Put additionally
// refuses a view the kernel would not read back as itself (a hand-built
// warrant.View), so every stored file decodes. Verify re-derives every
// index from the bodies.
//
// Refusals are *warrant.Error values (wrapped in *BatchError by Put);
// storage failures are *Error.
package jsonstore
