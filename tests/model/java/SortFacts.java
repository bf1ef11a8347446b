import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedList;
import java.util.List;

/**
 * Plain JDK, no Pulsar: how Collections.sort orders a LinkedList of positions by their values
 * with a given comparator, or that it throws. Each stdin line is "ID<TAB>MODE<TAB>v0<TAB>v1...",
 * MODE "int" for (int) (a - b) over doubles (AvgShedder's broker order before PR #24954) or
 * "double" for Double.compare(a, b), "desc" for Double.compare(b, a) (the shedders' bundle sorts);
 * prints "ID<TAB>i0<TAB>i1..." (the positions in sorted order)
 * or "ID<TAB>THROW<TAB>message" when the sort throws IllegalArgumentException. The same positions
 * are also sorted through a sized Stream.sorted (AvgShedder's calculateScoresAndSort streams its
 * score map that way); when that answer differs the line is "ID<TAB>STREAM-DIFFERS".
 */
public class SortFacts {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] p = line.split("\t", -1);
            int n = p.length - 2;
            double[] v = new double[n];
            List<Integer> list = new LinkedList<>();
            for (int i = 0; i < n; i++) {
                v[i] = Double.parseDouble(p[i + 2]);
                list.add(i);
            }
            Comparator<Integer> c = p[1].equals("int")
                    ? (e1, e2) -> (int) (v[e1] - v[e2])
                    : p[1].equals("desc")
                    ? (e1, e2) -> Double.compare(v[e2], v[e1])
                    : (e1, e2) -> Double.compare(v[e1], v[e2]);
            String viaStream;
            try {
                viaStream = list.stream().sorted(c).toList().toString();
            } catch (IllegalArgumentException e) {
                viaStream = "THROW";
            }
            StringBuilder line1 = new StringBuilder(p[0]);
            String viaSort;
            try {
                Collections.sort(list, c);
                for (int i : list) {
                    line1.append('\t').append(i);
                }
                viaSort = list.toString();
            } catch (IllegalArgumentException e) {
                line1.append("\tTHROW\t").append(e.getMessage());
                viaSort = "THROW";
            }
            out.append(viaSort.equals(viaStream) ? line1 : p[0] + "\tSTREAM-DIFFERS").append('\n');
        }
        System.out.print(out);
    }
}
