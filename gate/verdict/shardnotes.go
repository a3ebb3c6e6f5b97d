package verdict

// Notes of a gate merged from shards (package rounds' Merge).
const (
	NoteShardMissing NoteCode = "shard_missing" // Shard ("K/N"): no record arrived; judged on the others
	NoteShardFailed  NoteCode = "shard_failed"  // Shard, Detail: it stopped or its rounds do not read
	// NoteShardsTooFew: Shards (those that gave rounds) of Shard (N) is below
	// MinShards; Rounds: the paired rounds that arrived. Unusable.
	NoteShardsTooFew NoteCode = "shards_too_few"
)
