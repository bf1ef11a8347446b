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
 * "double" for Double.compare(a, b); prints "ID<TAB>i0<TAB>i1..." (the positions in sorted order)
 * or "ID<TAB>THROW<TAB>message" when the sort throws IllegalArgumentException.
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
                    : (e1, e2) -> Double.compare(v[e1], v[e2]);
            out.append(p[0]);
            try {
                Collections.sort(list, c);
                for (int i : list) {
                    out.append('\t').append(i);
                }
            } catch (IllegalArgumentException e) {
                out.append("\tTHROW\t").append(e.getMessage());
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
