package verdict

// Notes of a gate merged from shards (package rounds' Merge), worded by
// package report.
const (
	// NoteShardMissing: Shard ("K/N"): no record of it arrived; the gate is
	// judged on the others.
	NoteShardMissing NoteCode = "shard_missing"
	// NoteShardFailed: Shard, Detail (its error): it stopped or its rounds do
	// not read; they are not used.
	NoteShardFailed NoteCode = "shard_failed"
	// NoteShardsTooFew: Shards (shards that gave rounds) of Shard (N) is
	// below MinShards; Rounds: the paired rounds that arrived. Unusable.
	NoteShardsTooFew NoteCode = "shards_too_few"
)
