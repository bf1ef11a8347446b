# Names vulture (run by .ci/run over lbctl/) reports as unused but that are used where it cannot
# see: by a framework calling them back, by name through a registry, by the wire formats' field
# names, or by the tests as the public API they check. Anything else vulture finds is dead code:
# remove it rather than list it here. Format: vulture's whitelist (`vulture --make-whitelist`).
# ruff: noqa

# -- called by a framework: asyncio protocol callbacks, httpx's transport API, context managers,
#    functools.wraps-style attributes Typer reads, a logger switch, a Typer command function
_.connection_made
_.data_received
_.eof_received
_.connection_lost
_.handle_async_request
_.extract_cookies  # httpx.AsyncClient calls it on every answer (NoCookiesClient's jar)
response  # its parameter: httpx.Cookies.extract_cookies(response)
exc
exc_type
tb
_.__wrapped__
_.__signature__
_.context_class  # Click reads a command's context class (lbctl.cli.helptext)
context_class
_.__annotations__
_.disabled
whatif
list_plans
approve
reject
# http.server's handler API and server switches (lbctl.watch.server)
_.server_version
_.do_GET
_.do_HEAD
_.log_message
_.daemon_threads

# -- registered by class name (Pulsar's): strategies self-register on import and are found by name
LeastLongTermMessageRate
LeastResourceUsageWithWeight
RoundRobinBrokerSelector
AvgShedder
AvgShedderPlacement
OverloadShedder
ThresholdShedder
UniformLoadShedder
FlowOrQpsEquallyDivide
RangeEquallyDivide
SpecifiedPositionsDivide
TopicCountEquallyDivide
_.qualified_name

# -- words of a reason record: registered by @words.register, which dispatches on the record's type
avg_pick
admin_split
filtered
not_transferable
rotation
unranked
greedy
splitter
uniform
uniform_pick

# -- fields of a declared record: the wire formats (snapshot@1, plan@1, the journal, the fleet
#    tables) and result records whose every field is written or shown by name
direct_memory
bandwidth_in
bandwidth_out
weighted_max_usage
num_topics
num_consumers
num_producers
owner_bundles
owner_throughput
planDigest
adminUrl
resumes
notSent
usageAfter
pulsarVersion
unloadedBundles
unloadedBrokers
splitBundles
unloaded_brokers
deprecated_by
interrupted
_.interrupted
objective
variables
authorization

# -- public API the tests exercise (documented tables, Pulsar's helpers ported with their tests,
#    the sandbox's operations the live tests drive)
ENDPOINTS
EXIT_CODES
VARIANTS_BY_NAME
is_available
_.split_equally
FULL_RANGE
default_boundaries
ranges_from_boundaries
unloads_key
_.copy_of
hashmap_order
guava_expected_size_capacity
auto_splits  # checkNamespaceBundleSplit alone (the load manager also takes bundleCache's table)
refill_order  # refill_fill's order alone (the load manager also takes the table it leaves)
broker_host
_.vector
_.set_reassignment
_.remove_broker
_.set_dynamic
_.unjudged_total  # lbctl.watch.divergence.Checker: the moves not judged during the warm-up

# -- lbctl.sandbox.clock: the clock tests step by hand (every report, cycle and lookup at a time
# the test chose); the CLI runs the RunningClock
SteppedClock

# -- lbctl.simulate.hosts: building a snapshot of brokers on truth hosts (tests, benchmarks)
cluster_on_hosts

# -- lbctl.admin.prometheus: one range query (the history asks its chunk's queries together with
# query_ranges); the client's tests and the benchmark ask one at a time
_.query_range
# -- Typer command functions that lbctl.cli.app's LAZY table imports by name (the root builds a
#    subcommand when first asked for), and the click Group method the lazy root overrides
assign_preview
rebalance_after
examples
monitor_brokers
recommend
sandbox
split_bundle
_.list_commands
# render/hidden._Dumper: PyYAML's emitter reads these ScalarAnalysis flags (allow_* decide the
# scalar's style); set on the analysis it returns, never read by lbctl
_.allow_flow_plain
_.allow_block_plain
_.allow_single_quoted
_.allow_block
