package main

// stageLines are the acceptance stages of make test, one a line:
//
//	NAME  CLI  BROKER  RUN  SKIP
//
// CLI is terraform (TERRAFORM, whatever its version), terraform@V or
// opentofu@V (the machine's binary when it is V, else one scripts/cli.sh builds
// into the cache), or opentofu (TOFU whatever its version, else $tofu_newest);
// $tf_newest, $tf_oldest, $tofu_newest and $tofu_oldest are the GNUmakefile's
// versions. BROKER is a name of brokerPlan ("-" for none); RUN and SKIP are the
// go test -run and -skip patterns ("-" for none). $own are the tests that need a
// broker of their own, left out of the plain stages; $oauth the OAuth 2.0 tests;
// $faults the moves under network faults, which fault only their own
// connections and so share the plain brokers.
// Adding a stage is adding a line. resil, the longest, goes first so that the
// other lane runs the shorter stages beside it.
var stageLines = []string{
	"resil                 terraform      resil      TestAccRestart_|TestAccCluster_ -",
	"terraform-3.10        terraform      3.10       TestAcc           $own",
	"terraform-4.0         terraform      4.0        TestAcc           $own",
	"terraform-4.3         terraform      4.3        TestAcc           $own",
	"terraform-newest-3.10 $tf_newest     3.10       TestAcc           $own",
	"terraform-newest-4.3  $tf_newest     4.3        TestAcc           $own",
	"terraform-oldest-3.10 $tf_oldest     3.10       TestAcc           $own",
	"opentofu-4.3          $tofu_newest   4.3        TestAcc           $own",
	"opentofu-oldest-4.0   $tofu_oldest   4.0        TestAcc           $own",
	"opentofu-unit         $tofu_newest   -          .                 TestAcc",
	"node-quorum-4.3       terraform      4.3-quorum TestAccNodeQuorum -",
	"oauth-3.10            terraform      oauth-3.10 $oauth            -",
	"oauth-4.3             terraform      oauth-4.3  $oauth            -",
	"oauth-4.3-newest      $tf_newest     oauth-4.3  $oauth            -",
	"oauth-4.3-tofu        $tofu_newest   oauth-4.3  $oauth            -",
	"faults-3.10           $tf_newest     3.10       $faults           -",
	"faults-4.3            $tf_newest     4.3        $faults           -",
}

// The tests left out of the plain stages: those that need a broker of their
// own (the node-wide quorum refusal, OAuth 2.0, the restarts and node
// failures) and the moves under network faults, which have stages of their own.
const (
	ownTests   = "TestAccNodeQuorum|TestAccOAuth2_|TestAccBearerToken_|TestAccRestart_|TestAccCluster_|" + faultTests
	oauthTests = "^(TestAccOAuth2_|TestAccBearerToken_)"
	faultTests = "TestAccFaultMove_"
)
