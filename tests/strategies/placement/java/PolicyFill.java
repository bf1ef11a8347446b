import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Plain JDK, no Pulsar: the shape of a candidate set filled for a namespace with an isolation
 * policy. Three kept HashSets (the candidate set and two scratch sets), cleared before each fill
 * and never replaced, and a new HashSet copy of the broker list each line.
 * Each stdin line is "ID TAB MIN TAB kind:name TAB kind:name ..." where kind is p (primary),
 * s (secondary), n (neither) or h (a shared broker, for a fill without a policy, MIN ignored).
 * A fill without a policy (any h) puts the h names of the copy into the second scratch set, then
 * adds them all to the candidate set. Otherwise: walking the copy, p names go to the first
 * scratch set, s names to the second; the candidate set gets the first set, then the second when
 * the first holds fewer than MIN names. Prints "ID TAB name ..." in the candidate set's order.
 * A line "NEW" starts with three new sets. A line "DEL TAB name ..." removes those names from the
 * candidate set (as a filter does); a fill line whose ID starts with "+" does not clear the
 * candidate set first (a refill that adds the names back).
 */
public final class PolicyFill {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        Set<String> cands = new HashSet<>();
        Set<String> first = new HashSet<>();
        Set<String> second = new HashSet<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("NEW")) {
                cands = new HashSet<>();
                first = new HashSet<>();
                second = new HashSet<>();
                continue;
            }
            String[] f = line.split("\t", -1);
            if (f[0].equals("DEL")) {
                for (int i = 1; i < f.length; i++) {
                    cands.remove(f[i]);
                }
                continue;
            }
            int min = Integer.parseInt(f[1]);
            List<String> names = new ArrayList<>();
            Set<String> p = new HashSet<>();
            Set<String> s = new HashSet<>();
            Set<String> h = new HashSet<>();
            for (int i = 2; i < f.length; i++) {
                String name = f[i].substring(2);
                names.add(name);
                switch (f[i].charAt(0)) {
                    case 'p': p.add(name); break;
                    case 's': s.add(name); break;
                    case 'h': h.add(name); break;
                    default: break;
                }
            }
            Set<String> copy = new HashSet<>(names);
            first.clear();
            second.clear();
            for (String b : copy) {
                if (p.contains(b)) {
                    first.add(b);
                } else if (s.contains(b) || h.contains(b)) {
                    second.add(b);
                }
            }
            if (!f[0].startsWith("+")) {
                cands.clear();
            }
            if (!h.isEmpty()) {
                cands.addAll(second);
            } else {
                cands.addAll(first);
                if (first.size() < min) {
                    cands.addAll(second);
                }
            }
            out.append(f[0]);
            for (String b : cands) {
                out.append('\t').append(b);
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
