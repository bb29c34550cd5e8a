// Stands in for a podmin-agent that fails at start for a reason of its own.
'use strict';
process.stderr.write('exiting-agent: cannot start\n');
process.exit(3);
